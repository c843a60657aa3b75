"""The research engine, free of chat-platform code.

    jobs/       the job service front ends talk to; stored events; durable delivery
    research/   the pipeline and its steps, with and without a model
    answer/     writing, citation checks, grading, the answer cache
    retrieval/  knowledge base, embeddings, vector store, ranking
    sources/    search sources (local, Wikipedia, arXiv, PubMed, Tavily, SearXNG), their
                registry and call policy, reading the pages behind web hits
    web/        guarded outbound HTTP, page fetching
    llm/        model gateway, providers, prompts
    models, errors, config, db, redact, text: shared by all of them
"""
