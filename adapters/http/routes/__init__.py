"""The app's routers: the research API (jobs), its progress stream (events), the answer pages
(pages), and the operations endpoints (health)."""
