DETACH {analytics_copy}
