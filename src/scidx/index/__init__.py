"""The runtime: open a ``.scidx`` file and search it (numpy, msgpack and xxhash only)."""
