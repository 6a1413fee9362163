-- Where the window of warehouse rows starts: the earliest provider's start.
SELECT min(start) FROM _pub_window
