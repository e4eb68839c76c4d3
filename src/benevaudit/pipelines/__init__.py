"""benevaudit.pipelines."""
