"""benevaudit.generation."""
