-- DuckDB never installs or loads an extension by itself: each is loaded by name from its
-- installed file (warehouse/lake.py), nothing is downloaded at run time.
SET autoinstall_known_extensions = false;
SET autoload_known_extensions = false;
