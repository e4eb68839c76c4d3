"""benevaudit.audit.interventions."""
