"""A seeded synthetic conversation corpus for benchmarks at scale: a team's years of chat.

Not a handful of templates: every turn's words are drawn from a vocabulary whose frequencies
follow a Zipf law (rank r has weight 1 / r^ZIPF_S: English function words first, then everyday
content words, then a long tail of made-up words, as a real team's jargon, product and project
names are), with people's names, places and dates mixed in, in sessions of two speakers drawn
from a population of people (also Zipf: a few people talk most). So posting lists have the
lengths of real text: a few lexemes in a large share of the documents, most in a handful.

Every `PLANT_EVERY`-th turn states something specific ("I repaired the old kayak with Olga
Petrova in Lisbon on 3 May 2024"), and `Corpus.question(j)` asks about it ("When did Maria
repair the kayak with Olga Petrova?") with that turn as the known evidence. A planted turn and
its question depend only on (seed, j), and a session's speakers only on (seed, session), so the
questions of a scope built from a corpus can be made again without generating its turns.

Synthetic on purpose: LOCOMO (CC BY-NC) may not be copied into the repository, and CI needs no
data file. Nothing here touches the database.
"""

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

ZIPF_S = 1.07
SESSION_SIZE = 50
PLANT_EVERY = 37  # one planted turn in 37: 27,027 in a million turns
TAIL_WORDS = 40_000

FUNCTION = (
    "the i to and a you it of that is in was for my we on have so just it's be with but this not are at do like "
    "me what know was can if they all about one get he she out up there would then going think really when your "
    "from or been how an had yeah oh no will more some him her our did time now right well by as also them"
).split()
CONTENT = (
    "work home week day team meeting project call weekend coffee lunch dinner family kids trip office plan "
    "idea book movie game music friend job boss client deadline report email review release bug code deploy "
    "server design budget sales launch customer feedback roadmap sprint demo draft contract invoice travel "
    "flight hotel train car bike run gym doctor school class garden house apartment rent party birthday "
    "wedding concert museum beach mountain lake river park city village market shop restaurant bakery "
    "recipe pasta soup salad cake bread tea wine beer rain snow sun morning evening night summer winter "
    "spring autumn holiday vacation photo camera phone laptop screen printer desk chair window door kitchen "
    "dog cat horse bird fish painting guitar piano violin drum song dance yoga swim hike climb sail ski "
    "chess football tennis golf basketball novel poem story article podcast interview course exam degree "
    "thesis paper conference workshop talk slide chart spreadsheet database metric dashboard alert outage "
    "incident ticket ticketing backlog estimate hiring candidate offer salary promotion manager mentor intern "
    "partner vendor supplier warehouse shipment order refund delivery package"
).split()
# (past, base): "I repaired …", "When did Maria repair …?"
VERBS = [tuple(pair.split("/")) for pair in (
    "repaired/repair painted/paint sold/sell bought/buy built/build planned/plan cancelled/cancel finished/finish "
    "started/start visited/visit organised/organise booked/book rebuilt/rebuild shipped/ship tested/test "
    "reviewed/review cooked/cook baked/bake rented/rent borrowed/borrow lost/lose found/find moved/move "
    "designed/design fixed/fix launched/launch"
).split()]
ADJECTIVES = "old new red small large blue wooden broken second green quiet shared spare vintage".split()
OBJECTS = (
    "kayak piano greenhouse website bicycle dashboard prototype canoe treehouse database podcast garage "
    "workshop exhibit telescope aquarium newsletter sculpture quilt van caravan boat studio roadmap "
    "benchmark fence patio mural drone bookshelf"
).split()
FIRST = (
    "Maria Ahmed Chen Olga Tomas Priya Kwame Sofia Lars Aiko Mateo Leila Noah Ingrid Ravi Elena Jonas Fatima "
    "Diego Mei Samuel Nadia Hugo Amara Pavel Lucia Omar Greta Kenji Zara Felix Ines Tariq Hanna Luca Yara Emil "
    "Rosa Idris Alma Anya Bruno Carmen Dmitri Esther Farid Gloria Hamid Irene Jamal Keiko Liam Marta Nikolai"
).split()
LAST = (
    "Lopez Khan Wang Petrova Novak Sharma Mensah Rossi Berg Tanaka Garcia Haddad Kim Larsen Iyer Popescu Weber "
    "Diallo Silva Zhou Okafor Costa Dubois Nilsson Moreau Sato Fischer Nowak Reyes Alton Berski Casani Dalwood"
).split()
PLACES = (
    "Lisbon Berlin Nairobi Osaka Toronto Lima Oslo Accra Madrid Seoul Denver Porto Prague Dublin Quito Austin "
    "Lyon Hanoi Cairo Perth Bergen Tromso Cusco Bilbao Leeds Graz Utrecht Malmo Krakow Tbilisi"
).split()
MONTHS = "January February March April May June July August September October November December".split()
_SYLLABLES = "ka lo mi ren tu sa vel dor in ar bex qui zo pra nel tis gor fa um lek".split()


def _tail_words() -> list[str]:
    """TAIL_WORDS made-up words of two and three syllables, in a fixed order (the Zipf ranks)."""
    words = ["".join(p) for p in itertools.product(_SYLLABLES, repeat=2)]
    words += ["".join(p) for p in itertools.product(_SYLLABLES, repeat=3)]
    return words[:TAIL_WORDS]


@dataclass(frozen=True)
class Planted:
    """The turn a question is about: its session and turn ids, its text, and the question."""

    session_id: str
    turn_id: str
    speaker: str
    text: str
    question: str


class Corpus:
    """`turns` turns in sessions of SESSION_SIZE, one turn every `span / turns` up to `end`."""

    def __init__(self, *, turns: int, seed: int = 7, people: int = 400, years: float = 3.0, end: datetime | None = None):
        self.turns, self.seed = turns, seed
        self.end = end or datetime(2026, 1, 1, tzinfo=UTC)
        self.start = self.end - timedelta(days=365 * years)
        self.step = (self.end - self.start) / max(turns, 1)
        vocab = FUNCTION + CONTENT + _tail_words()
        self.vocab = vocab
        self.cum = list(itertools.accumulate(1.0 / (rank ** ZIPF_S) for rank in range(1, len(vocab) + 1)))
        naming = random.Random(f"{seed}-people")
        names = sorted({f"{a} {b}" for a in FIRST for b in LAST})
        self.people = naming.sample(names, min(people, len(names)))
        self.people_cum = list(itertools.accumulate(1.0 / rank for rank in range(1, len(self.people) + 1)))

    def session_id(self, session: int) -> str:
        return f"c{self.seed}-{session}"

    def speakers(self, session: int) -> tuple[str, str]:
        rng = random.Random(f"{self.seed}-session-{session}")
        first = rng.choices(self.people, cum_weights=self.people_cum)[0]
        second = first
        while second == first:
            second = rng.choices(self.people, cum_weights=self.people_cum)[0]
        return first, second

    def occurred_at(self, number: int) -> datetime:
        return self.start + self.step * number

    def sessions(self) -> Iterator[tuple[str, list[dict]]]:
        """(session id, messages) in order: what `ingest_session` and `memoryweb ingest` take."""
        rng = random.Random(f"{self.seed}-text")
        for session, offset in enumerate(range(0, self.turns, SESSION_SIZE)):
            speakers = self.speakers(session)
            messages = []
            for number in range(offset, min(self.turns, offset + SESSION_SIZE)):
                speaker = speakers[number % 2]
                planted = self.planted_at(number)
                text = planted.text if planted else self._chatter(rng, number)
                messages.append({"id": str(number), "speaker": speaker, "text": text, "occurred_at": self.occurred_at(number).isoformat()})
            yield self.session_id(session), messages

    def _chatter(self, rng: random.Random, number: int) -> str:
        """A turn of Zipf words, sometimes naming a person, a place or a date."""
        words = rng.choices(self.vocab, cum_weights=self.cum, k=max(3, int(rng.lognormvariate(2.4, 0.5))))
        roll = rng.random()
        if roll < 0.15:
            words.insert(rng.randrange(len(words) + 1), rng.choices(self.people, cum_weights=self.people_cum)[0])
        elif roll < 0.25:
            words.insert(rng.randrange(len(words) + 1), f"in {rng.choice(PLACES)}")
        elif roll < 0.30:
            words.append(f"on {self._date(rng, number)}")
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice((".", ".", ".", "?", "!"))

    def _date(self, rng: random.Random, number: int) -> str:
        moment = self.occurred_at(number) - timedelta(days=rng.randrange(0, 60))
        return f"{moment.day} {MONTHS[moment.month - 1]} {moment.year}"

    def planted_count(self) -> int:
        return len(range(PLANT_EVERY // 2, self.turns, PLANT_EVERY))

    def planted(self, j: int) -> Planted:
        """The j-th planted turn, made from (seed, j) alone."""
        number = PLANT_EVERY // 2 + j * PLANT_EVERY
        session = number // SESSION_SIZE
        speaker = self.speakers(session)[number % 2]
        rng = random.Random(f"{self.seed}-plant-{j}")
        (verb, base), adjective, thing = rng.choice(VERBS), rng.choice(ADJECTIVES), rng.choice(OBJECTS)
        other = rng.choice([p for p in self.people if p != speaker])
        place, when = rng.choice(PLACES), self._date(rng, number)
        text = f"I {verb} the {adjective} {thing} with {other} in {place} on {when}, {rng.choice(CONTENT)} was {rng.choice(CONTENT)}."
        first = speaker.split()[0]
        question = rng.choice((
            f"When did {first} {base} the {thing} with {other}?",
            f"Where did {first} and {other} {base} the {adjective} {thing}?",
            f"Who {verb} the {adjective} {thing} with {other}?",
            f"What did {first} {base} with {other} in {place}?",
        ))
        return Planted(self.session_id(session), str(number), speaker, text, question)

    def planted_at(self, number: int) -> Planted | None:
        j, rest = divmod(number - PLANT_EVERY // 2, PLANT_EVERY)
        return self.planted(j) if rest == 0 and number >= PLANT_EVERY // 2 else None
