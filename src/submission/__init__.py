"""The student's submission package: datasets, attention, model, trainer, helper and utils."""
