"""The research core, free of chat-platform, web-framework and command-line code.

Packages import only those below them (checked by import-linter, see pyproject.toml):

    jobs        the job service: the only writer of job state; the queue; durable delivery
    research    research as a function of its request: `Researcher.run(request, sink)`
    answer      writing, citation and fact checks, grading, the semantic answer cache
    sources     search sources (local, Wikipedia, arXiv, PubMed, Tavily, SearXNG), their
                registry, their resilience (breakers, rate limits, retries) and reading the
                pages behind web hits
    retrieval   the knowledge base, embeddings, vector store, ranking
    llm         the model gateway, providers, prompts
    web         the one guarded path for outbound HTTP
    store       every table, read back as typed models
    config, metrics, logfields      settings slices, Prometheus collectors, log fields
    models, errors, redact, text    data, the error tree, secret redaction, text helpers
"""
