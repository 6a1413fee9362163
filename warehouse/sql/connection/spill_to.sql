-- Where work beyond the memory limit spills (a path: SET binds no parameter).
SET temp_directory = {literal:path}
