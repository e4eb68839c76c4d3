"""benevaudit.llm."""
