"""Retrieval: the local knowledge base (kb), embeddings (embedding), the vector store
(vectors), passage ranking (rank) and rank fusion with diversity (fusion)."""
