SELECT max(fingerprint) FROM main.view_fingerprint
