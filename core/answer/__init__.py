"""Answers: writing them (synthesis: extractive without a model), checking their citations
(verify, claims, claim_check), grading confidence and limitations (grading), and the semantic
answer cache with its guard against serving another question's answer (cache,
question_match, lexicon)."""
