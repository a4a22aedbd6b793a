from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memories.scopes import scope_get
from memories.services.facts import fact_as_dict, fact_history, fact_list


class Command(MemorywebCommand):
    help = "List what a scope believes now (active facts), or with --history every fact with its validity interval."

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--scope", required=True, help="scope slug")
        parser.add_argument("--entity", default=None, help="only this entity (name or id)")
        parser.add_argument("--attribute", default=None, help="only this attribute (lives_in, role, …)")
        parser.add_argument("--history", action="store_true", help="whole chains: superseded and retracted facts too")

    def handle(self, *args, **options):
        principal = self.principal(options)
        scope = scope_get(principal, options["scope"], Access.READ)
        if options["history"]:
            facts = list(fact_history(scope=scope, entity_name_or_id=options["entity"], attribute=options["attribute"]))
        else:
            facts = list(fact_list(scope=scope, entity=options["entity"], attribute=options["attribute"]))
        lines = []
        for fact in facts:
            if options["history"]:
                interval = f"{_day(fact.valid_from) or '?'} → {_day(fact.valid_to) or 'now'}"
                lines.append(f"{fact.subject.name:<16} {fact.attribute:<20} {fact.value:<28} {interval:<26} {fact.status}")
            else:
                lines.append(f"{fact.subject.name:<16} {fact.attribute:<20} {fact.value:<28} since {_day(fact.valid_from) or '?'}")
        self.emit(options, {"scope": scope.slug, "facts": [fact_as_dict(f) for f in facts]}, "\n".join(lines) or "(no facts)")


def _day(moment) -> str:
    return moment.date().isoformat() if moment else ""
