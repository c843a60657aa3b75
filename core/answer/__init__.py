"""Answers: writing them (synthesis: extractive without a model), checking them (citations:
markers issued and checked by code, references built by code; sentences: the answer as
checkable sentences; fact_check: each cited sentence judged against its sources), grading
confidence and limitations (grading), and the semantic answer cache with its guard against
serving another question's answer (cache, question_match, lexicon)."""
