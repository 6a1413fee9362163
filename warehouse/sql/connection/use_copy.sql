-- A reader of a published copy works in it (attached as gpuprice).
USE gpuprice
