DELETE FROM main.view_fingerprint
