"""The build side: config, input discovery, chunking, the embedding cache and packing."""
