from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "retrieval"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from retrieval import signals

        signals.connect()  # deleted rows leave the search index (retrieval/signals.py)
