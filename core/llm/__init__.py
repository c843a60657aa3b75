"""Language models through litellm: the gateway (budgets, retries, fallbacks, JSON replies),
model strings and their providers (providers), and the prompt templates (prompts)."""
