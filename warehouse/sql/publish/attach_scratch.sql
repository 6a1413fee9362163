-- The scratch database where restarted offers are computed (a path: ATTACH binds no parameter).
ATTACH {literal:path} AS {analytics_scratch}
