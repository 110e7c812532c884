"""Static facts about one module that every rule reads: which calls are collectives, on which
ranks they run, and which definitions of each name reach them there."""
