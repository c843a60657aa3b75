"""The HTTP front end: the JSON API over the job service, its Server-Sent Events and the
server-rendered answer page per job.

    app         create_app: assembles the routers, error handling and services below
    routes/     jobs (/v1/research, /v1/jobs...), events (SSE), pages (/jobs/{id}), health
    auth        who is asking: API keys, keyless access, page tokens, per-key/tenant limits
    errors      the one error shape, its exception handlers, the request body size limit
    services    what the app serves from (ApiServices), handed to routes by Depends
    job_views   what is shown of a job; the one place its stored request and result are read
    schemas     request and response bodies (the OpenAPI document's schemas)
    page        the answer page's rendering, templates and assets
    feeds       one shared event follower per job"""
