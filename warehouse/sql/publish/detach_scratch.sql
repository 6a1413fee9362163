DETACH {analytics_scratch}
