DELETE FROM quarantine WHERE source = 'public_report'
