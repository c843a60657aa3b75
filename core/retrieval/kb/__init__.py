"""The local document knowledge base: documents (reading files), chunking, indexer (writing
the catalogue and the vectors), corpus (each tenant's BM25 corpus in memory), search (hybrid
ranking), and knowledge_base, the facade the rest of the bot calls."""
