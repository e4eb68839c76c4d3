"""benevaudit.audit."""
