INSERT INTO main.view_fingerprint VALUES ($fingerprint)
