-- The lake's snapshots older than the cutoff (their files stay until cleanup_old_files).
CALL ducklake_expire_snapshots($lake, older_than => $cutoff)
