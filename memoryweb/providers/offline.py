"""The offline extractor: English rules, no model. The embedded default's extractor.

It reads first-person statements ("I moved from San Francisco to New York") and simple
third-person ones ("Caroline lives in Boston") about where people live, where they work and as
what, what they like, their family and pets, and "my X is Y" details, and resolves dates ("in March
2024", "last week", "since 2019") against the time the text was said. It aims for precision:
questions, plans, hypotheticals and small talk give no facts rather than wrong ones, and nothing
it is given makes it raise.

How it reads, in order: normalise quotes and contractions, split into sentences (questions are
skipped), split sentences into clauses at conjunctions and commas that start a new subject, take
date phrases out of each clause, find the clause's subject (I / we → the speaker; a capitalised
name; "my sister Anna"; he/she → the last name mentioned), then match the predicate against the
rules below, each of which gives one or more atomic facts.
"""

import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta

from memoryweb.providers.schemas import ExtractedEntity, ExtractedFact, Extraction

log = logging.getLogger(__name__)

MAX_FACTS = 25  # per text: a long chat turn should not flood the memory with guesses
MAX_CLAUSE_CHARS = 400  # longer "clauses" are run-ons or pasted data, not statements

# Importance by attribute: life events high (≥ 0.75 ignores recency decay), preferences medium.
_IMPORTANCE = {
    "lives_in": 0.85, "works_at": 0.85, "role": 0.8, "spouse": 0.85, "partner": 0.8,
    "has_child": 0.85, "has_son": 0.85, "has_daughter": 0.85, "number_of_children": 0.8,
    "relationship_status": 0.8, "birth_date": 0.8, "born_in": 0.75, "studies_at": 0.75,
    "studies": 0.7, "graduated_from": 0.75, "is_from": 0.75, "grew_up_in": 0.75,
    "mother": 0.75, "father": 0.75, "has_sister": 0.75, "has_brother": 0.75, "has_pet": 0.75,
    "lived_in": 0.7, "worked_at": 0.7, "age": 0.7, "name": 0.8, "email": 0.7, "phone": 0.7,
    "birthday": 0.75, "has_friend": 0.6, "speaks": 0.6, "visited": 0.55, "likes": 0.5,
    "dislikes": 0.5, "plays": 0.5,
}  # fmt: skip
_DEFAULT_IMPORTANCE = 0.5

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "couple of": 2,
}  # fmt: skip
_NUM = r"(?:\d+|a couple of|couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(?:days?|weeks?|months?|years?)"

# Date phrases, most specific first. `since`/`for` phrases say when a state began (valid_from)
# but not when the episode happened; the others say both.
_DATE_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("iso", re.compile(r"\b(?:on\s+|since\s+|in\s+)?(\d{4}-\d{2}-\d{2})\b", re.I)),
    (
        "dmy",
        re.compile(
            rf"\b(?:(since|from)\s+|on\s+|in\s+)?(?:the\s+)?(\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\.?,?\s+\d{{4}})\b",
            re.I,
        ),
    ),
    ("mdy", re.compile(rf"\b(?:(since|from)\s+|on\s+|in\s+)?((?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}})\b", re.I)),
    (
        "month_year",
        re.compile(rf"\b(?:(since|from)\s+|(?:back\s+)?in\s+|during\s+)?((?:early|late|mid-?)\s*)?((?:{_MONTHS})\.?,?\s+(?:of\s+)?\d{{4}})\b", re.I),
    ),
    ("year", re.compile(r"\b(since|from|(?:back\s+)?in|during)\s+((?:19|20)\d{2})\b", re.I)),
    ("ago", re.compile(rf"\b({_NUM}\s+{_UNIT}\s+ago)\b", re.I)),
    ("for", re.compile(rf"\bfor\s+(?:the\s+(?:last|past)\s+)?({_NUM}|\d+)\s+({_UNIT})\b", re.I)),
    ("last_unit", re.compile(r"\b(last|this|past)\s+(week|weekend|month|year|night|morning|evening|afternoon)\b", re.I)),
    ("season", re.compile(r"\b(last|this|in the)\s+(summer|winter|spring|fall|autumn)\b", re.I)),
    ("weekday", re.compile(rf"\b(?:(last|this|on)\s+)({_WEEKDAYS})\b", re.I)),
    ("month", re.compile(rf"\b(?:(since|from)\s+|(?:back\s+)?in\s+|last\s+)(?:early\s+|late\s+|mid-?\s*)?({_MONTHS})\b(?!\s+\d)", re.I)),
    ("day", re.compile(r"\b(yesterday|today|tonight|the other day|earlier today)\b", re.I)),
]

# Words that open a sentence but are not names.
_NOT_NAMES = set(
    """
    i im i'm we you he she it they this that these those there here what when where why how who which whose
    my your our their his her its the a an and but or so if then also just well oh ah yes yeah yep no not nope
    hey hi hello thanks thank good great nice cool awesome sounds sure ok okay lol haha wow maybe please today
    yesterday tomorrow tonight last next every some any all both each one let lets let's do did does have has had
    is are was were can could would should will might must since after before while because although though
    anyway anyways actually honestly definitely really totally life being having getting going mine guess
    congrats congratulations sorry omg btw hope love like happy glad sad excited wish speaking talking also
    most many much more less few lots lot everyone everybody someone somebody nobody nothing something anything
    everything monday tuesday wednesday thursday friday saturday sunday january february march april may june
    july august september october november december spring summer fall autumn winter christmas easter new old
    dear absolutely exactly right true yay aww hmm hm um uh wait look see listen bye goodbye welcome
    """.split()
)
# Starts of a value that make it a description, not a name ("a startup", "my place").
_DETERMINERS = set(
    "a an my your his her our their its this that these those some any every each no another other such "
    "it them him me you us there here what which who whom how when where why".split()
)
# Lowercase words that are not places or organisations even in all-lowercase chat.
_NOT_PROPER = set(
    "home work school college university office town city the moment night bed church weekends lunch dinner "
    "breakfast gym store shop park beach party place house apartment flat company startup job it all first "
    "least most length times time to from in at on for with as of by and or but so then here there".split()
)
_RELATIONS = {
    "wife": ("spouse", "wife"), "husband": ("spouse", "husband"), "spouse": ("spouse", "spouse"),
    "partner": ("partner", "partner"), "girlfriend": ("partner", "girlfriend"), "boyfriend": ("partner", "boyfriend"),
    "fiance": ("partner", "fiancé"), "fiancee": ("partner", "fiancée"), "fiancé": ("partner", "fiancé"),
    "fiancée": ("partner", "fiancée"), "mother": ("mother", "mother"), "mom": ("mother", "mom"),
    "mum": ("mother", "mum"), "father": ("father", "father"), "dad": ("father", "dad"),
    "sister": ("has_sister", "sister"), "brother": ("has_brother", "brother"), "son": ("has_son", "son"),
    "daughter": ("has_daughter", "daughter"), "kid": ("has_child", "kid"), "child": ("has_child", "child"),
    "baby": ("has_child", "baby"), "friend": ("has_friend", "friend"), "best friend": ("has_friend", "best friend"),
    "cousin": ("has_cousin", "cousin"), "aunt": ("has_aunt", "aunt"), "uncle": ("has_uncle", "uncle"),
    "niece": ("has_niece", "niece"), "nephew": ("has_nephew", "nephew"), "roommate": ("has_roommate", "roommate"),
    "grandmother": ("has_grandmother", "grandmother"), "grandma": ("has_grandmother", "grandma"),
    "grandfather": ("has_grandfather", "grandfather"), "grandpa": ("has_grandfather", "grandpa"),
    "boss": ("boss", "boss"), "manager": ("boss", "manager"), "colleague": ("has_colleague", "colleague"),
    "coworker": ("has_colleague", "coworker"), "co-worker": ("has_colleague", "co-worker"),
}  # fmt: skip
_RELATION_RE = "|".join(sorted((re.escape(r) for r in _RELATIONS), key=len, reverse=True))
_PETS = {
    "dog": "dog", "puppy": "dog", "pup": "dog", "cat": "cat", "kitten": "cat", "kitty": "cat", "parrot": "parrot",
    "bird": "bird", "budgie": "bird", "hamster": "hamster", "rabbit": "rabbit", "bunny": "rabbit", "fish": "fish",
    "goldfish": "fish", "turtle": "turtle", "tortoise": "tortoise", "horse": "horse", "pony": "pony",
    "snake": "snake", "lizard": "lizard", "gecko": "gecko", "guinea pig": "guinea pig", "ferret": "ferret",
    "retriever": "dog", "labrador": "dog", "lab": "dog", "poodle": "dog", "beagle": "dog", "husky": "dog",
    "terrier": "dog", "bulldog": "dog", "corgi": "dog", "pug": "dog", "shepherd": "dog", "dachshund": "dog",
    "chihuahua": "dog",
}  # fmt: skip
_PET_RE = "|".join(sorted((re.escape(p) for p in _PETS), key=len, reverse=True))
# Heads of job titles, for the weak cues ("I'm a nurse", "she is a teacher at …"); strong cues
# ("as a …", "promoted to …") accept any short noun phrase.
_JOBS = set(
    """
    engineer developer programmer designer manager director teacher professor lecturer nurse doctor physician
    surgeon dentist lawyer attorney accountant consultant analyst scientist researcher writer author journalist
    editor artist painter musician photographer chef cook baker student intern architect pharmacist therapist
    counselor counsellor psychologist psychiatrist officer firefighter pilot driver mechanic electrician plumber
    carpenter farmer entrepreneur founder co-founder cofounder ceo cto cfo coo vp president lead recruiter
    salesperson marketer administrator librarian veterinarian vet technician assistant coordinator specialist clerk
    cashier waiter waitress bartender barista freelancer contractor tutor coach trainer actor actress singer dancer
    producer investor banker economist mathematician statistician biologist chemist physicist soldier paramedic
    worker postdoc owner principal partner associate executive head chair professional nanny caregiver
    secretary receptionist instructor translator interpreter sociologist historian curator illustrator animator
    dj podcaster youtuber streamer influencer blogger model stylist hairdresser barber tailor jeweler jeweller
    """.split()
)

# Adverbs that change nothing we store; removed from predicates (lowercase only, so a name
# like "Just Eat" survives).
_FILLERS = re.compile(
    r"\b(?:just|really|actually|finally|officially|currently|recently|also|still|totally|absolutely|truly|basically|"
    r"literally|honestly|definitely|certainly|always|usually|now|happily|proudly|luckily|unfortunately|sadly|"
    r"officially|newly|already|even|kinda|sort of|kind of)\b\s*"
)
_PARTICIPLES = (
    r"(?:moved|relocated|started|joined|lived|worked|got|gotten|become|begun|left|quit|adopted|bought|"
    r"married|visited|traveled|travelled|been|made|taken|found|switched|landed|accepted|retired|graduated|"
    r"finished|studied|loved|liked|hated|enjoyed|played|spoken|learned|learnt|grown|grew|turned|had)"
)
_DISCOURSE = re.compile(
    r"^(?:(?:oh|ah|well|so|and|but|also|yeah|yes|yep|no|ok|okay|um|uh|hey|anyway|anyways|btw|by the way|"
    r"actually|honestly|guess what|fun fact|plus|then|lol|haha|wow|oh well|of course|besides|however|"
    r"anyhow|in fact|as you know|you know|speaking of which|news|big news|update)\b[\s,:!.-]*)+",
    re.I,
)
_BOUNDARY = re.compile(
    r"\s+(?:as|in|at|for|from|to|with|since|on|and|but|because|after|before|when|while|where|who|which|that|"
    r"so|then|until|during|by|near|last|this|next|ago|anymore|any more|too|again|yet|though|although|if|or|"
    r"right|here|there|lately|now|today|yesterday|every|each|these|nowadays|whenever|like|full-time|part-time)\b"
    r"|[,;:!?()\"]|(?<!\bSt)(?<!\bMt)(?<!\bDr)(?<!\bFt)\.(?:\s|$)|\s+-+\s+",
    re.I,
)


@dataclass
class _Clause:
    text: str
    typed_lowercase: bool
    valid_from: datetime | None = None


@dataclass
class _Context:
    speaker: str
    occurred_at: datetime
    tz: object
    facts: list[ExtractedFact] = field(default_factory=list)
    subject_kinds: dict[str, str] = field(default_factory=dict)
    last_third_person: str | None = None
    event_at: datetime | None = None


def extract(*, text: str, speaker: str, occurred_at: datetime) -> Extraction:
    """Entities, atomic facts, importance and (if the text says when) occurred_at. Never raises."""
    speaker_name = (speaker or "").strip() or "user"
    if occurred_at.tzinfo is None:
        occurred_at = occurred_at.replace(tzinfo=UTC)
    ctx = _Context(speaker=speaker_name, occurred_at=occurred_at, tz=occurred_at.tzinfo)
    ctx.subject_kinds[speaker_name] = "person"
    for sentence in _sentences(_normalise(text or "")):
        if len(ctx.facts) >= MAX_FACTS:
            break
        try:
            _read_sentence(sentence, ctx)
        except Exception:  # one odd sentence must not cost the rest (the raw text is kept anyway)
            log.warning("offline extractor failed on a sentence; skipped", exc_info=True)
    facts = _dedupe(ctx.facts)[:MAX_FACTS]
    return Extraction(
        entities=_entities(facts, ctx),
        facts=facts,
        importance=_episode_importance(facts, text or ""),
        occurred_at=ctx.event_at,
        location=None,
    )


# --- text → sentences → clauses -------------------------------------------------------------


def _normalise(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = text.replace("\u2014", ", ").replace("\u2013", "-").replace("\u00a0", " ")
    return text


_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "inc", "ltd", "co", "vs", "etc", "mt", "ft", "e.g", "i.e"}
_SENTENCE_END = re.compile(r"([.!?]+)[\"')\]]*(?:\s+|$)|\n+")


def _sentences(text: str) -> list[str]:
    out, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        piece = text[start : match.end()]
        last_word = re.search(r"([\w.]+)[.!?]+\W*$", piece.strip())
        if match.group(1) == "." and last_word and last_word.group(1).lower().rstrip(".") in _ABBREVIATIONS:
            continue
        out.append(piece.strip())
        start = match.end()
    if text[start:].strip():
        out.append(text[start:].strip())
    return [s for s in out if s]


_CONTRACTIONS = [
    (re.compile(r"\b(i)'m\b", re.I), r"\1 am"),
    (re.compile(r"\bim\b"), "i am"),
    (re.compile(r"\b(i|you|we|they)'ve\b", re.I), r"\1 have"),
    (re.compile(r"\bive\b"), "i have"),
    (re.compile(r"\b(he|she|it|that|there|who|what)'s\s+(been|got|had)\b", re.I), r"\1 has \2"),
    (re.compile(r"\b(he|she|it|that|there|who|what)'s\b", re.I), r"\1 is"),
    (re.compile(r"\bcan't\b|\bcannot\b", re.I), "can not"),
    (re.compile(r"\bwon't\b", re.I), "will not"),
    (re.compile(r"n't\b", re.I), " not"),
    (re.compile(r"\b(do|does|did|is|are|was|were|have|has)nt\b", re.I), r"\1 not"),
    (re.compile(r"\bdont\b", re.I), "do not"),
    (re.compile(r"'re\b", re.I), " are"),
    (re.compile(r"'ll\b", re.I), " will"),
    (re.compile(r"'d\b", re.I), " would"),
]


def _expand(sentence: str) -> str:
    for pattern, replacement in _CONTRACTIONS:
        sentence = pattern.sub(replacement, sentence)
    return sentence


_SUBJECT_START = r"(?:i|we|he|she|my)\b"
_PREDICATE_VERBS = (
    r"(?:moved|relocated|started|joined|got|work|works|worked|live|lives|lived|love|loves|like|likes|"
    r"enjoy|enjoys|hate|hates|adopted|have|has|left|quit|became|play|plays|speak|speaks|went|visited|"
    r"bought|married|am|is|was|graduated|study|studies|grew)"
)
_CLAUSE_SPLIT = re.compile(
    rf";|\s+-+\s+|,?\s+(?:and|but|so|because|although|though|while|whereas|since|plus|and then|and now|but now)\s+(?={_SUBJECT_START})"
    rf"|,\s+(?={_SUBJECT_START})|,?\s+(?:and|and then|and also|then)\s+(?={_PREDICATE_VERBS}\b)"
    r"|,\s+(?:which|who|where|so|but)\b",
    re.I,
)


def _read_sentence(sentence: str, ctx: _Context) -> None:
    if sentence.rstrip("\"') ").endswith("?"):
        return  # a question states nothing
    sentence = _expand(sentence.rstrip(".!?\"' "))
    # Chat typed all in lowercase ("i live in new york") gets lowercase places and organisations.
    typed_lowercase = not re.search(r"[A-Z]", re.sub(r"\bI\b", "", sentence))
    pieces = [p.strip(" ,") for p in _CLAUSE_SPLIT.split(sentence) if p and p.strip(" ,")]
    clauses = []
    for piece in pieces:
        piece = _DISCOURSE.sub("", piece).strip(" ,")
        if not piece or len(piece) > MAX_CLAUSE_CHARS:
            continue
        clause = _Clause(text=piece, typed_lowercase=typed_lowercase)
        clause.text, clause.valid_from = _take_dates(clause.text, ctx)
        clauses.append(clause)
    # One date in a sentence ("Last week, I moved to Boston and started at MIT") covers its clauses.
    dates = {c.valid_from for c in clauses if c.valid_from}
    if len(dates) == 1:
        for clause in clauses:
            clause.valid_from = clause.valid_from or next(iter(dates))
    previous_subject: str | None = None
    for clause in clauses:
        previous_subject = _read_clause(clause, ctx, previous_subject)


# --- dates ----------------------------------------------------------------------------------


def _take_dates(text: str, ctx: _Context) -> tuple[str, datetime | None]:
    """Remove date phrases from a clause; the first one that resolves is when its facts began."""
    found: datetime | None = None
    present_perfect = bool(re.search(r"\b(?:have|has)\b", text, re.I))
    for kind, pattern in _DATE_PATTERNS:
        while match := pattern.search(text):
            resolved, is_event = _resolve(kind, match, ctx, present_perfect)
            text = (text[: match.start()] + " " + text[match.end() :]).strip()
            text = re.sub(r"\s{2,}", " ", text)
            if resolved is not None and found is None:
                found = resolved
                if is_event and ctx.event_at is None:
                    ctx.event_at = resolved
    text = re.sub(r"\s+([,.!])", r"\1", text).strip(" ,")
    return text, found


def _midnight(day, ctx: _Context) -> datetime:
    return datetime.combine(day, time.min, tzinfo=ctx.tz)


def _resolve(kind: str, match: re.Match, ctx: _Context, present_perfect: bool) -> tuple[datetime | None, bool]:
    """(when, whether it says when something happened) for one date phrase."""
    now = ctx.occurred_at.astimezone(ctx.tz)
    today = now.date()
    groups = [g for g in match.groups()]
    since = bool(groups and isinstance(groups[0], str) and groups[0].lower() in {"since", "from"})
    if kind == "iso":
        return _parse(groups[0], ctx), True
    if kind in {"dmy", "mdy"}:
        return _parse(groups[1], ctx), not since
    if kind == "month_year":
        return _parse(re.sub(r"\bof\b", "", groups[2]), ctx), not since
    if kind == "year":
        is_since = groups[0].lower() in {"since", "from"}
        return _midnight(today.replace(year=int(groups[1]), month=1, day=1), ctx), not is_since
    if kind == "ago":
        return _parse(groups[0], ctx), True
    if kind == "for":
        if not present_perfect:  # "I lived in Paris for 3 years" says how long, not when
            return None, False
        amount = int(groups[0]) if groups[0].isdigit() else _NUMBER_WORDS.get(groups[0].lower(), 1)
        return _parse(f"{amount} {groups[1]} ago", ctx), False
    if kind == "last_unit":
        which, unit = groups[0].lower(), groups[1].lower()
        if unit in {"night", "morning", "evening", "afternoon"}:
            return _midnight(today - timedelta(days=1 if which == "last" else 0), ctx), True
        if unit == "weekend":
            back = (today.weekday() - 5) % 7 or 7  # the most recent Saturday before today
            return _midnight(today - timedelta(days=back if which == "last" else back % 7), ctx), True
        if which == "this":
            start = {"week": today - timedelta(days=today.weekday()), "month": today.replace(day=1), "year": today.replace(month=1, day=1)}
            return _midnight(start[unit], ctx), True
        return _parse(f"last {unit}", ctx), True
    if kind == "season":
        which, season = groups[0].lower(), groups[1].lower()
        month = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}[season]
        start = today.replace(month=month, day=1)
        if which == "last":
            # "last summer" said in July means the summer before.
            if start > today or (today - start).days < 92:
                start = start.replace(year=start.year - 1)
        elif start > today:
            start = start.replace(year=start.year - 1)
        return _midnight(start, ctx), True
    if kind == "weekday":
        weekday = _WEEKDAYS.split("|").index(groups[1].lower())
        back = (today.weekday() - weekday) % 7 or 7
        return _midnight(today - timedelta(days=back), ctx), True
    if kind == "month":
        month = _month_number(groups[1])
        start = today.replace(month=month, day=1)
        if start > today:
            start = start.replace(year=start.year - 1)
        return _midnight(start, ctx), not since
    if kind == "day":
        word = groups[0].lower()
        back = 1 if word == "yesterday" else 3 if word == "the other day" else 0
        return _midnight(today - timedelta(days=back), ctx), True
    return None, False


def _month_number(name: str) -> int:
    key = name.lower().rstrip(".")[:3]
    return ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].index(key) + 1


def _parse(phrase: str, ctx: _Context) -> datetime | None:
    import dateparser  # imported on first use: it costs a few hundred milliseconds

    base = ctx.occurred_at.astimezone(ctx.tz).replace(tzinfo=None)
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past", "RETURN_AS_TIMEZONE_AWARE": False}
    if re.search(_MONTHS, phrase, re.I) and not re.search(r"\b\d{1,2}(?:st|nd|rd|th)?\b(?!\d)", re.sub(r"\d{4}", "", phrase)):
        settings["PREFER_DAY_OF_MONTH"] = "first"  # "March 2024" is the 1st of March
    parsed = dateparser.parse(phrase, languages=["en"], settings=settings)
    return _midnight(parsed.date(), ctx) if parsed else None


# --- subjects -------------------------------------------------------------------------------

# Case-sensitive even inside re.I patterns: a name is capitalised ("my sister Anna lives …").
_NAME = r"(?-i:[A-Z][a-zA-Z'\-]*[a-z][a-zA-Z'\-]*)"


def _read_clause(clause: _Clause, ctx: _Context, previous_subject: str | None) -> str | None:
    """Facts from one clause; returns its subject, which a following subjectless clause inherits."""
    text = clause.text
    if re.search(r"\bnever\b|\bif\b|\bwould\b|\bwill\b|\bmight\b|\bcould\b|\bshould\b|\bwant(?:s|ed)? to\b|\bhope\b|\bwish\b", text, re.I):
        return previous_subject  # plans, wishes and hypotheticals are not facts
    # "Blue is my favorite color"
    if m := re.match(r"^(?P<value>.+?)\s+(?:is|are)\s+my\s+(?:all-time\s+|absolute\s+)?favou?rite\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)$", text, re.I):
        value = _plain_value(m["value"])
        if value:
            _add(ctx, clause, ctx.speaker, f"favorite_{_snake(m['what'])}", value)
        return ctx.speaker
    if m := re.match(r"^(?:i|we|me and my \w+|my \w+ and (?:i|me)|(?-i:[A-Z]\w+) and (?:i|me))\s+(?P<rest>.+)$", text, re.I):
        _predicate(m["rest"], ctx.speaker, clause, ctx, first_person=True)
        return ctx.speaker
    if m := re.match(r"^my\s+(?P<rest>.+)$", text, re.I):
        _possessive(m["rest"], clause, ctx)
        return ctx.speaker
    if m := re.match(r"^(?P<pronoun>he|she)\s+(?P<rest>.+)$", text, re.I):
        if ctx.last_third_person:
            _predicate(m["rest"], ctx.last_third_person, clause, ctx, first_person=False, confidence=0.7)
            return ctx.last_third_person
        return None
    if m := re.match(rf"^(?P<name>{_NAME}(?:\s+{_NAME})?)\s+(?P<rest>.+)$", text):
        name = m["name"]
        # "Here's …", "Mel's …": a contraction or possessive opens the clause, not a subject.
        contracted = re.search(r"'s$|'re$|'ll$|'ve$|'d$", name.split()[0], re.I)
        if not contracted and name.split()[0].lower() not in _NOT_NAMES and not (len(name.split()) > 1 and name.split()[1].lower() in _NOT_NAMES):
            if _predicate(m["rest"], name, clause, ctx, first_person=False, confidence=0.85):
                ctx.last_third_person = name
                ctx.subject_kinds.setdefault(name, "person")
            return name
        return None
    if previous_subject and re.match(rf"^{_PREDICATE_VERBS}\b", text, re.I):
        # "… and started at Stripe": the subject carries over.
        _predicate(text, previous_subject, clause, ctx, first_person=previous_subject == ctx.speaker)
        return previous_subject
    return None


def _possessive(rest: str, clause: _Clause, ctx: _Context) -> None:
    """Clauses starting with "my": relations, pets, and "my X is Y" details of the speaker."""
    me = ctx.speaker
    # "my dog Rex", "my dog's name is Rex", "my cat is called Miso"
    if m := re.match(
        rf"^(?:(?:new|little|old|sweet|cute)\s+)?(?P<kind>{_PET_RE})"
        rf"(?:'s name is|\s+is named|\s+is called|\s+named|\s+called|,)?\s+(?P<name>{_NAME})\b(?P<rest>.*)$",
        rest,
        re.I,
    ):
        if _proper(m["name"], clause, name=True):
            pet = _PETS[m["kind"].lower()]
            _add(ctx, clause, me, "has_pet", m["name"], obj=m["name"], obj_kind="other", sentence=f"{me} has a {pet} named {m['name']}.")
            ctx.subject_kinds.setdefault(m["name"], "other")
            if m["rest"].strip():
                _predicate(m["rest"].strip(), m["name"], clause, ctx, first_person=False, confidence=0.8)
            return
    # "my sister Anna (lives in Berlin)", "my wife is Maria", "my brother's name is Tom"
    if m := re.match(
        rf"^(?:(?:older|younger|little|big|baby|twin|eldest|oldest|youngest|step-?)\s*)?(?P<rel>{_RELATION_RE})"
        rf"(?:'s name is|\s+is named|\s+is called|\s+is|\s+named|\s+called|,)?\s+"
        rf"(?P<name>{_NAME}(?:\s+{_NAME})?)\b(?P<rest>.*)$",
        rest,
        re.I,
    ):
        name = m["name"]
        if _proper(name, clause, name=True) and name.split()[0].lower() not in _NOT_NAMES:
            attribute, word = _RELATIONS[m["rel"].lower()]
            _add(ctx, clause, me, attribute, name, obj=name, obj_kind="person", sentence=_relation_sentence(me, attribute, word, name))
            ctx.subject_kinds.setdefault(name, "person")
            ctx.last_third_person = name
            tail = m["rest"].strip(" ,")
            if tail:
                _predicate(tail, name, clause, ctx, first_person=False, confidence=0.8)
            return
    # "my job is software engineer", "my company is Acme"
    if m := re.match(r"^(?:new\s+|current\s+)?(?:job|position|role|job title|title)\s+is\s+(?P<role>.+)$", rest, re.I):
        role = _role(m["role"], strict=True)
        if role:
            _add(ctx, clause, me, "role", role)
        return
    if m := re.match(r"^(?:new\s+|current\s+)?(?:company|employer)\s+is\s+(?P<org>.+)$", rest, re.I):
        org = _proper(_cut(m["org"]), clause)
        if org:
            _add(ctx, clause, me, "works_at", org, obj=org, obj_kind="organization")
        return
    # "my favorite color is blue", "my email is ann@example.com"
    if m := re.match(r"^(?P<what>[a-z][a-z\- ]{1,40}?)\s+(?:is|are)\s+(?P<value>.+)$", rest, re.I):
        attribute = _detail_attribute(m["what"])
        if attribute:
            value = m["value"].strip().rstrip(".")
            if attribute not in {"email"}:
                value = _plain_value(value, max_words=8)
            if value:
                _add(ctx, clause, me, attribute, value)


_DETAILS = {
    "name": "name", "full name": "name", "first name": "first_name", "last name": "last_name", "surname": "last_name",
    "middle name": "middle_name", "nickname": "nickname", "email": "email", "email address": "email",
    "e-mail": "email", "e-mail address": "email", "phone": "phone", "phone number": "phone", "number": "phone",
    "cell": "phone", "cell number": "phone", "mobile": "phone", "mobile number": "phone", "birthday": "birthday",
    "date of birth": "birth_date", "address": "address", "home address": "address", "hometown": "hometown",
    "home town": "hometown", "username": "username", "handle": "username", "blood type": "blood_type",
    "zodiac sign": "zodiac_sign", "star sign": "zodiac_sign", "major": "major", "native language": "native_language",
    "first language": "native_language", "mother tongue": "native_language", "religion": "religion",
    "diet": "diet", "website": "website", "github": "github", "age": "age", "height": "height",
}  # fmt: skip


def _detail_attribute(what: str) -> str | None:
    what = " ".join(what.lower().split())
    if m := re.match(r"^(?:all-time\s+|absolute\s+)?favou?rite\s+([a-z]+(?:\s+[a-z]+)?)$", what):
        return f"favorite_{_snake(m[1])}"
    return _DETAILS.get(what)


def _relation_sentence(subject: str, attribute: str, word: str, name: str) -> str:
    if attribute.startswith("has_"):
        return f"{subject} has a {word} named {name}."
    return f"{subject}'s {word} is {name}."


# --- predicates -----------------------------------------------------------------------------


@dataclass
class _Pred:
    text: str
    negated: bool = False
    no_longer: bool = False  # "no longer" / "anymore": a state that ended, not a dislike
    perfect: bool = False  # "have lived in": still true, unlike "lived in"


def _prepare(text: str, *, first_person: bool) -> _Pred | None:
    pred = _Pred(text=" ".join(text.split()))
    t = pred.text
    t = re.sub(r"\b(?:have|has) been to\b", "visited", t)
    if m := re.match(r"^(?:have|has)\s+been\b\s*", t, re.I):
        t, pred.perfect = ("am " if first_person else "is ") + t[m.end() :], True
    elif m := re.match(r"^had\s+been\b\s*", t, re.I):
        t = "was " + t[m.end() :]
    t = _FILLERS.sub("", t).strip()
    if m := re.match(rf"^(?:have|has|had)\s+(?={_PARTICIPLES}\b)", t, re.I):
        t, pred.perfect = t[m.end() :], True
    if re.search(r"\s+(?:any ?more|any longer)$", t, re.I):
        t, pred.negated, pred.no_longer = re.sub(r"\s+(?:any ?more|any longer)$", "", t, flags=re.I), True, True
    if m := re.match(r"^(am|is|are|was)\s+no longer\s+", t, re.I):
        t, pred.negated, pred.no_longer = f"{m[1]} " + t[m.end() :], True, True
    elif m := re.match(r"^no longer\s+", t, re.I):
        t, pred.negated, pred.no_longer = t[m.end() :], True, True
    elif m := re.match(r"^(?:do|does|did)\s+not\s+", t, re.I):
        t, pred.negated = t[m.end() :], True
    elif m := re.match(r"^(am|is|are)\s+not\s+(?!a fan\b|into\b)", t, re.I):
        t, pred.negated = f"{m[1]} " + t[m.end() :], True
    elif re.match(r"^(?:have|has|had|was|were)\s+not\b", t, re.I):
        return None  # "I haven't lived there", "I wasn't hired": too easy to misread
    pred.text = t.strip()
    return pred if pred.text else None


def _predicate(text: str, subject: str, clause: _Clause, ctx: _Context, *, first_person: bool, confidence: float = 0.9) -> bool:
    """Match one predicate against the rules; True when it gave a fact."""
    pred = _prepare(text, first_person=first_person)
    if pred is None:
        return False
    before = len(ctx.facts)
    for rule in _RULES:
        if rule(pred, subject, clause, ctx, confidence):
            break
    return len(ctx.facts) > before


def _rule_leave(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    m = re.match(
        r"^(?:left|quit|resigned from|retired from|(?:was|got|been) (?:fired|let go|laid off) (?:from|by|at))\s+"
        r"(?:(?:my|his|her|their|the)\s+(?:old\s+)?(?:job|position|role)\s+(?:at|with)\s+|(?:working|my job)\s+(?:at|for)\s+)?(?P<org>.+)$",
        pred.text,
        re.I,
    )
    if not m or pred.negated:
        return False
    org = _proper(_cut(m["org"]), clause)
    if not org:
        return False
    _add(ctx, clause, subject, "works_at", org, obj=org, obj_kind="organization", negated=True, confidence=confidence)
    return True


def _rule_move(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    m = re.match(
        r"^(?:moved|relocated|have moved|has moved)(?:\s+back|\s+here|\s+over|\s+all the way)?\s+"
        r"(?P<rest>(?:from|to|out of|away from)\s+.+)$",
        pred.text,
        re.I,
    )
    if not m or pred.negated:
        return False
    rest = m["rest"]
    if out := re.match(r"^(?:out of|away from)\s+(?P<place>.+)$", rest, re.I):
        place = _proper(_cut(out["place"]), clause)
        if place:
            _add(ctx, clause, subject, "lives_in", place, obj=place, obj_kind="place", negated=True, confidence=confidence)
            return True
        return False
    parts: dict[str, str] = {}
    for segment in re.finditer(r"(?:^|\s)(from|to)\s+", rest, re.I):
        value = _cut(rest[segment.end() :])
        parts.setdefault(segment[1].lower(), value)
    to = _proper(parts.get("to", ""), clause)
    origin = _proper(parts.get("from", ""), clause)
    if to:
        _add(ctx, clause, subject, "lives_in", to, obj=to, obj_kind="place", previous=origin, confidence=confidence)
        return True
    if origin:
        _add(ctx, clause, subject, "lived_in", origin, obj=origin, obj_kind="place", confidence=confidence)
        return True
    return False


def _rule_live(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    m = re.match(
        r"^(?P<verb>live|lives|living|lived|used to live|am living|is living|are living|was living|reside|resides|"
        r"residing|am based|is based|are based|based|am staying|is staying|stay|stays|am settled|settled)\s+in\s+(?P<place>.+)$",
        pred.text,
        re.I,
    )
    if not m:
        return False
    place_text = _cut(m["place"])
    place = _proper(place_text, clause)
    if not place:
        return False
    verb = m["verb"].lower()
    past = verb in {"lived", "used to live", "was living"} and not pred.perfect
    if past:
        if pred.negated:
            return False
        _add(ctx, clause, subject, "lived_in", place, obj=place, obj_kind="place", confidence=confidence)
    else:
        _add(ctx, clause, subject, "lives_in", place, obj=place, obj_kind="place", negated=pred.negated, confidence=confidence)
    _trailing_work(m["place"][len(place_text) :], subject, clause, ctx, confidence)
    return True


def _rule_work(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    t = pred.text
    patterns = [
        # "work at Google (as …) (in …)", "have worked for Acme"
        r"^(?P<verb>work|works|working|am working|is working|are working|worked|was working)\s+(?:at|for|with)\s+(?P<org>.+)$",
        # "started at Google", "started a new job at Google", "joined Google", "got a job at Acme"
        r"^(?P<verb>started|start|starting|began|begun|am starting)\s+(?:(?:working|work|a new job|a job|my new job|"
        r"my job|a new role|a new position|a position|an internship|my internship|a new gig|a gig)\s+)?(?:at|with|for)\s+(?P<org>.+)$",
        r"^(?P<verb>joined|join|am joining|is joining)\s+(?:the\s+team\s+at\s+)?(?P<org>.+)$",
        r"^(?P<verb>got|landed|accepted|took|have|has|got offered|was offered|am starting|started)\s+(?:a|an|the|my)\s+(?:new\s+|first\s+|dream\s+)?"
        r"(?:job|position|role|internship|offer|gig)(?:\s+as\s+(?:a|an)\s+(?P<as>.+?))?\s+(?:at|with|for)\s+(?P<org>.+)$",
        r"^(?P<verb>(?:was|got|been|am|is)\s+)?hired\s+(?:at|by)\s+(?P<org>.+)$",
    ]
    for pattern in patterns:
        if m := re.match(pattern, t, re.I):
            break
    else:
        return _rule_role(pred, subject, clause, ctx, confidence)
    org_text = _cut(m["org"])
    org = _proper(org_text, clause)
    if not org:
        # "works at the library as a librarian": no named employer, but the role still counts.
        if pred.negated:
            return False
        before = len(ctx.facts)
        _trailing_work(m["org"][len(org_text) :], subject, clause, ctx, confidence)
        return len(ctx.facts) > before
    verb = (m["verb"] or "").strip().lower()
    if verb in {"worked", "was working"} and not pred.perfect:
        if not pred.negated:
            _add(ctx, clause, subject, "worked_at", org, obj=org, obj_kind="organization", confidence=confidence)
        return True
    if pred.negated and verb not in {"work", "works", "working", "am working", "is working", "are working"}:
        return False  # "I didn't join Google" is not a state we can store
    _add(ctx, clause, subject, "works_at", org, obj=org, obj_kind="organization", negated=pred.negated, confidence=confidence)
    if pred.negated:
        return True
    if m.groupdict().get("as"):
        role = _role(m["as"])
        if role:
            _add(ctx, clause, subject, "role", role, confidence=confidence)
    rest = m["org"][len(org_text) :]
    _trailing_work(rest, subject, clause, ctx, confidence)
    return True


def _trailing_work(rest: str, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> None:
    """"… as a software engineer in San Francisco (at Google)": role, place, organisation."""
    for segment in re.finditer(r"(?:^|\s)(as|in|at|for)\s+", rest, re.I):
        word, value = segment[1].lower(), _cut(rest[segment.end() :])
        if word == "as":
            role = _role(value)
            if role:
                _add(ctx, clause, subject, "role", role, confidence=confidence)
        elif word == "in":
            place = _proper(value, clause)
            if place:
                _add(ctx, clause, subject, "lives_in", place, obj=place, obj_kind="place", confidence=min(confidence, 0.8))
        elif word in {"at", "for"}:
            org = _proper(value, clause)
            if org:
                _add(ctx, clause, subject, "works_at", org, obj=org, obj_kind="organization", confidence=confidence)


def _rule_role(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    t = pred.text
    strong = [
        r"^(?:got\s+|was\s+|been\s+|am\s+|is\s+)?promoted\s+to\s+(?P<role>.+)$",
        r"^(?:work|works|working|am working|is working)\s+as\s+(?P<role>.+)$",
        r"^(?:started|start|began|joined)\s+as\s+(?P<role>.+)$",
        r"^(?:became|become|am becoming|is becoming)\s+(?P<role>(?:a|an|the)\s+.+)$",
    ]
    for pattern in strong:
        if m := re.match(pattern, t, re.I):
            role_text = _cut(m["role"])
            role = _role(role_text, strict=pattern.startswith("^(?:became"))
            if not role:
                return False
            _add(ctx, clause, subject, "role", role, negated=pred.negated and pred.no_longer, confidence=confidence)
            if not pred.negated:
                _trailing_work(m["role"][len(role_text) :], subject, clause, ctx, confidence)
            return True
    # "I am a nurse", "she is a teacher at Lincoln High", "I am the CTO of Acme": a job word is required.
    if m := re.match(r"^(?:am|is|are|work as)\s+(?P<role>(?:a|an|the)\s+.+)$", t, re.I):
        role_text = _cut(m["role"])
        role = _role(role_text, strict=True)
        if not role:
            return False
        rest = m["role"][len(role_text) :]
        of = re.match(r"^\s+of\s+(?P<org>.+)$", rest, re.I)
        head = role.split()[-1].lower()
        if head == "student" and (at := re.match(r"^\s+(?:at|in)\s+(?P<org>.+)$", rest, re.I)):
            school = _proper(_cut(at["org"]), clause)
            _add(ctx, clause, subject, "role", role, negated=pred.negated, confidence=confidence)
            if school and not pred.negated:
                _add(ctx, clause, subject, "studies_at", school, obj=school, obj_kind="organization", confidence=confidence)
            return True
        _add(ctx, clause, subject, "role", role, negated=pred.negated, confidence=confidence)
        if pred.negated:
            return True
        if of:
            org = _proper(_cut(of["org"]), clause)
            if org:
                _add(ctx, clause, subject, "works_at", org, obj=org, obj_kind="organization", confidence=confidence)
        else:
            _trailing_work(rest, subject, clause, ctx, confidence)
        return True
    return False


_LIKE_VERBS = (
    r"love|loves|loved|adore|adores|enjoy|enjoys|enjoyed|like|likes|liked|"
    r"(?:am|is|are|was)\s+(?:(?:really|so|totally|very|super|quite|a)\s+)*(?:into|passionate about|obsessed with|crazy about|fond of|"
    r"(?:big |huge |massive |great )?fan of|in love with)|have a passion for|has a passion for|have a soft spot for"
)
_DISLIKE_VERBS = (
    r"hate|hates|hated|dislike|dislikes|detest|detests|loathe|loathes|can not stand|could not stand|"
    r"(?:am|is|are)\s+not\s+(?:a\s+)?(?:big\s+)?(?:fan of|into)"
)


def _rule_likes(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    t = pred.text
    attribute = None
    if m := re.match(rf"^(?:{_DISLIKE_VERBS})\s+(?P<what>.+)$", t, re.I):
        if pred.negated:
            return False
        attribute, negated = "dislikes", False
    elif m := re.match(rf"^(?:{_LIKE_VERBS})\s+(?P<what>.+)$", t, re.I):
        if pred.negated and not pred.no_longer:
            attribute, negated = "dislikes", False  # "I don't like coffee"
        else:
            attribute, negated = "likes", pred.negated
    if not attribute:
        return False
    items = _like_items(m["what"])
    for item in items:
        proper = item if item[:1].isupper() and item.split()[0].lower() not in _NOT_NAMES else None
        _add(ctx, clause, subject, attribute, item, obj=proper, obj_kind="other", negated=negated, confidence=confidence)
    return bool(items)


_LIKE_CUT = re.compile(
    r"\s+(?:so much|a lot|very much|too|as well|because|when|whenever|since|but|though|although|with|on|at|in|every|"
    r"each|during|after|before|if|while|in the|these days|nowadays|lately|more than|than|right now|at the moment|"
    r"now|again|anymore|any more|ever since|from|for|here|there|which|that|who)\b|[,;:!?()\"]|\.(?:\s|$)",
    re.I,
)
_CHATTY_OBJECTS = set(
    "it that this you them him her me us what how when where why who which so being to the idea hearing seeing "
    "knowing talking chatting your his their our catching meeting sharing hanging spending".split()
)
_CHATTY_VERBS = set(
    "be hear see know think say tell talk help ask get have make do go meet try share chat catch thank "
    "keep find check let give take".split()
)


# A taste never starts with a verb or a bare preposition.
_NOT_A_TASTE = set("is are was were be been has have had can will would does did in on at of for about by as".split())


def _like_items(what: str) -> list[str]:
    """"playing football and tennis" → [football, tennis]; "to cook" → cooking."""
    cut = _LIKE_CUT.search(what)
    text = what[: cut.start()] if cut else what
    text = text.strip()
    if not text:
        return []
    words = text.split()
    if words[0].lower() in _CHATTY_OBJECTS and words[0].lower() not in {"the", "to"}:
        return []
    if words[0].lower() in _NOT_A_TASTE:
        return []  # "Unconditional love is so important": "love" was a noun, not the verb
    if re.match(r"^(?:the|this|that)\s+(?:new|same|way|idea|fact|one|thing|part|rest|moment)\b", text, re.I):
        return []  # points at something in the conversation, not a taste
    if words[0].lower() == "to":
        if len(words) < 2 or words[1].lower() in _CHATTY_VERBS:
            return []
        text = " ".join([_gerund(words[1])] + words[2:])
    items = []
    for raw in re.split(r"\s*,\s*|\s+and\s+|\s+&\s+|\s+or\s+", text):
        item = re.sub(r"^(?:playing|play)\s+", "", raw.strip(), flags=re.I)
        item = re.sub(r"^(?:the|a|an|some)\s+", "", item, flags=re.I).strip(" .'")
        if not item or len(item.split()) > 5 or item.split()[0].lower() in _DETERMINERS | _CHATTY_OBJECTS:
            continue
        if item.split()[0].lower() in {"hearing", "seeing", "talking", "chatting", "knowing", "meeting"}:
            continue
        items.append(item)
    return items


def _gerund(verb: str) -> str:
    verb = verb.lower()
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    if re.match(r"^[^aeiou]*[aeiou][bdgmnprt]$", verb) and len(verb) <= 4:
        return verb + verb[-1] + "ing"  # run → running, swim → swimming
    return verb + "ing"


def _rule_plays(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    m = re.match(r"^(?:play|plays|am playing|is playing|playing)\s+(?:the\s+)?(?P<what>.+)$", pred.text, re.I)
    if not m or (pred.negated and not pred.no_longer):
        return False
    if re.match(r"^(?:with|at|in|for|a|an|some|it|that|this|around|along|games? with)\b", m["what"], re.I):
        return False
    items = _like_items(m["what"])
    for item in items:
        _add(ctx, clause, subject, "plays", item, negated=pred.negated, confidence=confidence)
    return bool(items)


def _rule_speaks(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    m = re.match(r"^(?:speak|speaks|am fluent in|is fluent in)\s+(?P<what>.+)$", pred.text, re.I)
    if not m or pred.negated:
        return False
    added = False
    for item in _like_items(re.sub(r"\s+(?:fluently|a little|well)\b.*$", "", m["what"], flags=re.I)):
        if item[:1].isupper() or clause.typed_lowercase:
            _add(ctx, clause, subject, "speaks", item, confidence=confidence)
            added = True
    return added


def _rule_pets(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    m = re.match(
        rf"^(?:have|has|got|adopted|adopt|own|owns|bought|rescued|got myself|brought home|have got|has got)\s+"
        rf"(?:a|an|one|another|(?P<count>two|three|four|\d+))\s+(?:(?!hot\b)[\w-]+\s+){{0,2}}?(?P<kind>{_PET_RE})(?:s|es)?\b"
        # "named Rex", or after an apposition: "a new puppy, a golden retriever called Max"
        rf"(?:(?:,\s+(?:a|an)\s+(?:[\w-]+\s+){{0,3}}?|\s*,?\s*)(?:named|called|whose name is)\s+(?P<name>{_NAME}(?:\s+and\s+{_NAME})?))?",
        pred.text,
        re.I,
    )
    if not m or (pred.negated and not pred.no_longer):
        return False
    pet = _PETS[m["kind"].lower()]
    names = [n for n in re.split(r"\s+and\s+", m["name"] or "") if n]
    if names:
        for name in names:
            _add(ctx, clause, subject, "has_pet", name, obj=name, obj_kind="other", negated=pred.negated, confidence=confidence,
                 sentence=f"{subject} {'no longer has' if pred.negated else 'has'} a {pet} named {name}.")  # fmt: skip
            ctx.subject_kinds.setdefault(name, "other")
    else:
        _add(ctx, clause, subject, "has_pet", pet, negated=pred.negated, confidence=confidence,
             sentence=f"{subject} {'no longer has' if pred.negated else 'has'} a {pet}.")  # fmt: skip
    return True


def _rule_family(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    t = pred.text
    if pred.negated:
        return False
    if m := re.match(
        rf"^(?:have|has|got)\s+(?:a|an|one|two|three|\d+)\s+"
        rf"(?:(?:little|older|younger|big|baby|twin|step-?|new|lovely|beautiful)\s*)*(?P<rel>{_RELATION_RE})s?\b"
        rf"(?:\s*,?\s*(?:named|called)\s+(?P<name>{_NAME}))?",
        t,
        re.I,
    ):
        rel = m["rel"].lower()
        attribute, word = _RELATIONS[rel]
        if m["name"]:
            _add(ctx, clause, subject, attribute, m["name"], obj=m["name"], obj_kind="person", confidence=confidence,
                 sentence=_relation_sentence(subject, attribute, word, m["name"]))  # fmt: skip
            ctx.subject_kinds.setdefault(m["name"], "person")
            return True
        count = re.match(r"^(?:have|has|got)\s+(two|three|four|five|\d+)\s+(?:kids|children)\b", t, re.I)
        if count:
            number = _NUMBER_WORDS.get(count[1].lower()) or int(count[1])
            _add(ctx, clause, subject, "number_of_children", str(number), confidence=confidence, sentence=f"{subject} has {number} children.")
            return True
        return False
    married = rf"^(?:got married|married|am married|is married|got engaged|am engaged|is engaged)(?:\s+to)?(?:\s+(?P<name>{_NAME}))?"
    if m := re.match(married, t, re.I):
        engaged = "engaged" in m[0].lower()
        status = "engaged" if engaged else "married"
        if m["name"] and _proper(m["name"], clause, name=True):
            attribute = "partner" if engaged else "spouse"
            _add(ctx, clause, subject, attribute, m["name"], obj=m["name"], obj_kind="person", confidence=confidence,
                 sentence=f"{subject} is {status} to {m['name']}.")  # fmt: skip
            ctx.subject_kinds.setdefault(m["name"], "person")
        _add(ctx, clause, subject, "relationship_status", status, confidence=confidence, sentence=f"{subject} is {status}.")
        return True
    if m := re.match(r"^(?:got divorced|(?:am|is) divorced|(?:am|is) single|got separated|(?:am|is) separated|broke up)\b", t, re.I):
        status = {"broke": "single"}.get(m[0].split()[0].lower(), m[0].split()[-1].lower())
        _add(ctx, clause, subject, "relationship_status", status, confidence=confidence, sentence=f"{subject} is {status}.")
        return True
    baby = (
        rf"^(?:had|welcomed)\s+(?:a|our|my|her|his|their)\s+(?:first\s+|second\s+|new\s+)?(?:baby|son|daughter)"
        rf"(?:\s+(?:girl|boy))?(?:\s*,?\s*(?:named|called)\s+(?P<name>{_NAME}))?"
    )
    if m := re.match(baby, t, re.I):
        value = m["name"] or "a baby"
        _add(ctx, clause, subject, "has_child", value, obj=m["name"], obj_kind="person", confidence=confidence,
             sentence=f"{subject} had a baby named {m['name']}." if m["name"] else f"{subject} had a baby.")  # fmt: skip
        return True
    return False


def _rule_origin(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    t = pred.text
    if pred.negated:
        return False
    for pattern, attribute in (
        (r"^(?:am|is|are|come|comes|am originally|is originally|originally come|originally)\s+from\s+(?P<place>.+)$", "is_from"),
        (r"^(?:grew up|was raised|were raised)\s+in\s+(?P<place>.+)$", "grew_up_in"),
        (r"^(?:was|were)\s+born\s+in\s+(?P<place>.+)$", "born_in"),
        (r"^(?:graduated|have graduated)\s+from\s+(?P<place>.+)$", "graduated_from"),
    ):
        if m := re.match(pattern, t, re.I):
            place = _proper(_cut(m["place"]), clause)
            if place:
                kind = "organization" if attribute == "graduated_from" else "place"
                _add(ctx, clause, subject, attribute, place, obj=place, obj_kind=kind, confidence=confidence)
                return True
            return False
    if re.match(r"^(?:was|were)\s+born$", t, re.I) and clause.valid_from:
        _add(ctx, clause, subject, "birth_date", clause.valid_from.date().isoformat(), confidence=confidence)
        return True
    return False


def _rule_study(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    m = re.match(
        r"^(?:study|studies|studying|am studying|is studying|am majoring in|is majoring in|major in|majoring in)\s+(?P<what>.+)$",
        pred.text,
        re.I,
    )
    if not m or pred.negated:
        return False
    what = _cut(m["what"])
    rest = m["what"][len(what) :]
    topic = _plain_value(what, max_words=4)
    if topic and topic.lower().split()[0] not in {"at", "in", "for", "hard", "a", "the"}:
        _add(ctx, clause, subject, "studies", topic, confidence=confidence)
    if at := re.match(r"^\s+(?:at|in)\s+(?P<school>.+)$", rest, re.I):
        school = _proper(_cut(at["school"]), clause)
        if school:
            _add(ctx, clause, subject, "studies_at", school, obj=school, obj_kind="organization", confidence=confidence)
    return bool(topic)


def _rule_age(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    m = re.match(r"^(?:am|is|turned|turn|turns)\s+(?P<age>\d{1,3})(?:\s+years?\s+old)?$", pred.text, re.I)
    if not m or pred.negated or not 0 < int(m["age"]) < 130:
        return False
    _add(ctx, clause, subject, "age", m["age"], confidence=confidence, sentence=f"{subject} is {m['age']} years old.")
    return True


def _rule_visit(pred: _Pred, subject: str, clause: _Clause, ctx: _Context, confidence: float) -> bool:
    m = re.match(
        r"^(?:went|have gone|traveled|travelled|flew|drove|took a trip|took a vacation|went on a trip|visited|visit|was|were)\s+"
        r"(?:back\s+)?(?:to\s+|in\s+)?(?P<place>.+)$",
        pred.text,
        re.I,
    )
    if not m or pred.negated:
        return False
    verb = pred.text.split()[0].lower()
    if verb in {"was", "were"} and not re.match(r"^(?:was|were)\s+in\s+", pred.text, re.I):
        return False
    place_text = _cut(m["place"])
    place = _proper(place_text, clause, allow_lowercase=False)
    if not place:
        return False
    _add(ctx, clause, subject, "visited", place, obj=place, obj_kind="place", confidence=min(confidence, 0.8))
    return True


_RULES = [
    _rule_leave,
    _rule_move,
    _rule_live,
    _rule_work,
    _rule_likes,
    _rule_pets,
    _rule_family,
    _rule_origin,
    _rule_study,
    _rule_plays,
    _rule_speaks,
    _rule_age,
    _rule_visit,
]


# --- values ---------------------------------------------------------------------------------


def _cut(text: str) -> str:
    """The value at the start of `text`, up to the first preposition, conjunction or punctuation."""
    text = text.strip()
    match = _BOUNDARY.search(text, 1) if text else None
    return (text[: match.start()] if match else text).strip(" .,'\"")


def _proper(value: str, clause: _Clause, *, name: bool = False, allow_lowercase: bool = True) -> str | None:
    """A place, organisation or name: capitalised (or any word in all-lowercase chat), short,
    not a description ("a startup", "my place")."""
    value = re.sub(r"^the\s+", "", value.strip(), flags=re.I).strip(" .,'\"")
    words = value.split()
    if not words or len(words) > 6 or len(value) > 80 or re.search(r"'s\s+[a-z]", value):
        return None  # too long, or a possessive description ("Taylor's house")
    first = words[0].lower()
    if first in _DETERMINERS or first in {"the", "being", "getting", "going"}:
        return None
    if value[0].isupper() or value[0].isdigit():
        if name and first in _NOT_NAMES:
            return None
        return value
    if allow_lowercase and clause.typed_lowercase and not name and first not in _NOT_PROPER and len(words) <= 4:
        return value
    return None


def _role(text: str, *, strict: bool = False) -> str | None:
    """A job title: "a software engineer" → "software engineer". `strict` wants a job word."""
    text = _cut(text)
    text = re.sub(r"^(?:a|an|the|my|his|her|their|our)\s+", "", text, flags=re.I).strip()
    text = re.sub(r"^(?:new|first|current)\s+", "", text, flags=re.I)
    words = text.split()
    if not words or len(words) > 6 or words[0].lower() in _DETERMINERS | _CHATTY_OBJECTS:
        return None
    if strict and words[-1].lower().rstrip("s") not in _JOBS and words[-1].lower() not in _JOBS:
        return None
    if not re.match(r"^[\w][\w .&/+'-]*$", text):
        return None
    return text


def _plain_value(text: str, *, max_words: int = 6) -> str | None:
    text = _cut(text) if len(text.split()) > max_words else text.strip(" .,'\"")
    text = re.sub(r"^(?:a|an)\s+", "", text, flags=re.I).strip()
    words = text.split()
    if not words or len(words) > max_words:
        return None
    if words[0].lower() in _DETERMINERS | {"so", "very", "really", "pretty", "too", "going", "getting", "doing", "not", "quite"}:
        return None
    return text


def _snake(text: str) -> str:
    return "_".join(re.sub(r"[^a-z0-9 ]", " ", text.lower().replace("favourite", "favorite")).split())


# --- facts and entities ---------------------------------------------------------------------

_SENTENCES = {
    "lives_in": ("{s} lives in {v}.", "{s} no longer lives in {v}."),
    "lived_in": ("{s} used to live in {v}.", "{s} never lived in {v}."),
    "works_at": ("{s} works at {v}.", "{s} no longer works at {v}."),
    "worked_at": ("{s} used to work at {v}.", "{s} never worked at {v}."),
    "role": ("{s} is {a} {v}.", "{s} is no longer {a} {v}."),
    "likes": ("{s} likes {v}.", "{s} no longer likes {v}."),
    "dislikes": ("{s} dislikes {v}.", "{s} no longer dislikes {v}."),
    "plays": ("{s} plays {v}.", "{s} no longer plays {v}."),
    "speaks": ("{s} speaks {v}.", "{s} does not speak {v}."),
    "visited": ("{s} visited {v}.", "{s} did not visit {v}."),
    "is_from": ("{s} is from {v}.", "{s} is not from {v}."),
    "grew_up_in": ("{s} grew up in {v}.", "{s} did not grow up in {v}."),
    "born_in": ("{s} was born in {v}.", "{s} was not born in {v}."),
    "birth_date": ("{s} was born on {v}.", "{s} was not born on {v}."),
    "studies": ("{s} studies {v}.", "{s} no longer studies {v}."),
    "studies_at": ("{s} studies at {v}.", "{s} no longer studies at {v}."),
    "graduated_from": ("{s} graduated from {v}.", "{s} did not graduate from {v}."),
    "has_pet": ("{s} has a pet named {v}.", "{s} no longer has {v}."),
    "age": ("{s} is {v} years old.", "{s} is not {v} years old."),
}


def _sentence_for(subject: str, attribute: str, value: str, negated: bool) -> str:
    if attribute in _SENTENCES:
        template = _SENTENCES[attribute][1 if negated else 0]
    else:
        label = attribute.replace("_", " ")
        template = "{s}'s " + label + (" is no longer {v}." if negated else " is {v}.")
    article = "an" if value[:1].lower() in "aeiou" else "a"
    return template.format(s=subject, v=value, a=article)


def _add(
    ctx: _Context,
    clause: _Clause,
    subject: str,
    attribute: str,
    value: str,
    *,
    obj: str | None = None,
    obj_kind: str = "other",
    previous: str | None = None,
    negated: bool = False,
    confidence: float = 0.9,
    sentence: str | None = None,
) -> None:
    if len(ctx.facts) >= MAX_FACTS:
        return
    value = value.strip()
    if not value:
        return
    importance = _IMPORTANCE.get(attribute, 0.75 if attribute.startswith("has_") else _DEFAULT_IMPORTANCE)
    ctx.facts.append(
        ExtractedFact(
            subject=subject,
            attribute=attribute,
            value=value,
            object_entity=obj,
            object_kind=obj_kind if obj else "other",
            sentence=sentence or _sentence_for(subject, attribute, value, negated),
            valid_from=clause.valid_from,
            previous_value=previous,
            negated=negated,
            confidence=confidence,
            importance=importance,
        )
    )


def _dedupe(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    seen, out = set(), []
    for fact in facts:
        key = (fact.subject.lower(), fact.attribute, fact.value.lower(), fact.negated)
        if key not in seen:
            seen.add(key)
            out.append(fact)
    return out


def _entities(facts: list[ExtractedFact], ctx: _Context) -> list[ExtractedEntity]:
    rank = {"actor": 0, "location": 1, "object": 2, "other": 3}
    found: dict[str, ExtractedEntity] = {}

    def note(name: str, kind: str, role: str) -> None:
        key = name.lower()
        if key not in found:
            found[key] = ExtractedEntity(name=name, kind=kind, role=role)
        elif rank[role] < rank[found[key].role]:
            found[key] = ExtractedEntity(name=found[key].name, kind=found[key].kind, role=role)

    for fact in facts:
        note(fact.subject, ctx.subject_kinds.get(fact.subject, "person"), "actor")
        if fact.object_entity:
            note(fact.object_entity, fact.object_kind, "location" if fact.object_kind == "place" else "object")
            if fact.previous_value:  # "moved from San Francisco": San Francisco is named too
                note(fact.previous_value, fact.object_kind, "location" if fact.object_kind == "place" else "object")
    return list(found.values())


def _episode_importance(facts: list[ExtractedFact], text: str) -> float:
    if facts:
        return max(f.importance or _DEFAULT_IMPORTANCE for f in facts)
    return 0.1 if len(text) < 80 else 0.2  # small talk; kept, but ranked low
