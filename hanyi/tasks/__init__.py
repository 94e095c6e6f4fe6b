"""lmms-eval task YAMLs, one folder per benchmark. See ``docs/<benchmark>.md`` for each folder."""
