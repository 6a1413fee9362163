-- The update's work tables, dropped whether it finished or not.
DROP TABLE IF EXISTS temp.main._pub_now;
DROP TABLE IF EXISTS temp.main._pub_changed;
DROP TABLE IF EXISTS temp.main._pub_cut;
DROP TABLE IF EXISTS temp.main._pub_restart;
DROP TABLE IF EXISTS temp.main._pub_window;
