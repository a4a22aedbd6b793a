from accounts.services import personal_team_ensure
from memoryweb.management.base import MemorywebCommand
from memoryweb.progress import progress_bar
from retrieval.eval import MODES, format_report, run_locomo


class Command(MemorywebCommand):
    help = "Evaluate retrieval: `eval locomo` ingests LOCOMO conversations into throwaway scopes and scores evidence recall."

    def add_command_arguments(self, parser) -> None:
        sub = self.add_subcommands(parser)
        locomo = sub.add_parser("locomo", help="evidence recall@k on LOCOMO conversations")
        locomo.add_argument("--dataset", required=True, help="the LOCOMO JSON file (e.g. locomo10.json)")
        locomo.add_argument("--conversations", default="", help="comma-separated sample ids (default: all)")
        locomo.add_argument("--k", type=int, default=10)
        locomo.add_argument("--mode", choices=sorted(MODES), default="turns")
        locomo.add_argument("--out", help="write one JSON record per question here")

    def handle(self, *args, **options):
        principal = self.principal(options)
        with progress_bar(label="eval locomo", quiet=options["json"], unit="") as progress:
            report = run_locomo(
                dataset=options["dataset"], team=personal_team_ensure(user=principal.user),
                conversations=[c.strip() for c in options["conversations"].split(",") if c.strip()] or None,
                k=options["k"], mode=options["mode"], out=options.get("out"), progress=progress,
            )
        self.emit(options, report, format_report(report))
