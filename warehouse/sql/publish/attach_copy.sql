-- The copy being built, attached to the warehouse connection (a path: ATTACH binds no parameter).
ATTACH {literal:path} AS {analytics_copy}
