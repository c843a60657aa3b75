"""The local document knowledge base: loading, chunking, indexing, hybrid retrieval."""
