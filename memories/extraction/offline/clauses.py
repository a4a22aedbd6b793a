"""Text → sentences → clauses: quotes and contractions normalised, questions skipped, sentences
split at conjunctions and commas that start a new subject, dates taken out of each clause."""

import re

from memories.extraction.offline.truecase import unknown_words_capitalised
from memories.extraction.offline.context import Clause, Context
from memories.extraction.offline.dates import take_dates
from memories.extraction.offline.rules.team import due_date, verb_base
from memories.extraction.offline.subjects import HYPOTHETICAL, common_subject, correction_taken, read_clause, team_said_as_we
from memories.extraction.offline.words import NOT_NAMES, PREDICATE_VERBS
from memories.extraction.vocabulary import CORRECTION_ATTRIBUTE, CORRECTS_CURRENT

MAX_CLAUSE_CHARS = 400  # longer "clauses" are run-ons or pasted data, not statements
_DISCOURSE = re.compile(
    r"^(?:(?:oh|ah|well|so|and|but|also|yeah|yes|yep|no|ok|okay|um|uh|hey|(?:hi|hello|hey|hiya|hola)(?:\s+(?:all|everyone|everybody|team|folks|there|y'?all))?|anyway|anyways|btw|by the way|"
    r"actually|honestly|guess what|fun fact|confirmed|nope|haha|ugh|hmm|indeed|fyi|heads up|good news|plus|then|lol|haha|wow|oh well|of course|besides|however|"
    r"anyhow|in fact|as you know|you know|speaking of which|news|big news|update|correction|to correct myself|sorry|"
    r"i mean|i meant|wait|my mistake|my bad|scratch that|i was wrong|i misspoke|oops|let me correct that|to correct that|"
    r"that is wrong|that was wrong|that is not right|that is incorrect|i got that wrong|i had that wrong|"
    r"to clarify|to be clear|change of plans?|(?:quick\s+|friendly\s+)?reminder(?:\s+that)?|"
    r"from today|starting today|from now on|effective today|effective immediately|these days|nowadays|currently|at the moment|right now|for now|as of (?:now|today)|as things stand)\b[\s,:!.-]*)+",
    re.I,
)


# Openings that make a sentence a correction even when it names no wrong value ("Correction: the
# offsite is in Porto", "Sorry, I meant Porto"). Not "actually" alone: chat says it all the time.
_CORRECTION_MARK = re.compile(
    r"^(?:correction|to correct myself|to correct that|sorry,?\s+i meant|sorry,?\s+correction|i meant|my mistake|my bad|scratch that|"
    r"i was wrong|i misspoke|oops|no wait|wait,?\s+no|let me correct that|that is wrong|that was wrong|that is not right|"
    r"that is incorrect|i got that wrong|i had that wrong)\b",
    re.I,
)


_WRONG_ABOUT = re.compile(
    r"^(?:(?:sorry|oops|correction)(?:\s+(?:all|everyone|everybody|folks|team|y'?all))?[\s,:!-]*)?(?:i was wrong|i got it wrong|i was mistaken|i misspoke|my mistake|my bad|i made a mistake|"
    r"correction|scratch what i said)\s+(?:about|on|regarding|with)\s+(?P<wrong>[^,;:]{1,40}?)\s*(?:[,;:-]+|\.(?=\s))\s*(?P<rest>\S.+)$",
    re.I,
)


# A label before a colon that heads a statement ("Heads up: …", "Personal news: …", "Version
# control news: …", "Decision from the leads meeting: …", "Typo yesterday: …"): at most five
# words (seven when it says it corrects), no "is" of its own. Its words may say that the statement is a
# correction or a decision, or name the function a switch is about.
_LABEL = re.compile(r"^(?P<label>[A-Za-z][\w'\-]*(?:[ ,]+[\w'\-]+){0,7}?)\s*:\s+(?P<rest>\S.*)$")
_LABEL_CORRECTS = re.compile(r"\b(?:wrong|typo|misspoke|mistake|correction|corrected|off by|my bad|oops|sorry)\b", re.I)
_LABEL_DECIDES = re.compile(r"\b(?:decision|decided|agreed|agreement|consensus|verdict|resolved|voted)\b", re.I)


def label_taken(sentence: str) -> tuple[str, str | None, str]:
    """(the sentence without its label, what the label says: "corrects" / "decides" / None, the
    label). A label whose rest is no statement of three words or more is kept."""
    m = _LABEL.match(sentence)
    if not m or len(m["rest"].split()) < 3 or re.match(r"(?:correction|decision|final decision)$", m["label"], re.I):
        return sentence, None, ""
    label = m["label"]
    kind = "corrects" if _LABEL_CORRECTS.search(label) else "decides" if _LABEL_DECIDES.search(label) else None
    if kind == "corrects" and re.search(r"\b(?:about|regarding)\s+\S", label, re.I):
        return sentence, None, ""  # "I was wrong about Porto: …" names the wrong value (read by _WRONG_ABOUT)
    if kind is None and (re.search(r"\b(?:is|are|was|were|am)\b", label, re.I) or len(label.split()) > 5):
        return sentence, None, ""  # "the art pipeline is mine: …" is a statement, not a label
    return m["rest"], kind, label


# A label that says the speaker moved ("Moved house at the weekend", "just moved"), before "<town> to <town>".
_MOVE_LABEL = re.compile(r"^(?:(?:just|finally|officially)\s+)?(?:moved|relocated)(?:\s+(?:house|home|flats?))?"
                         r"(?=(?:\s+(?:at the weekend|this weekend|last weekend|last week|this week|yesterday|today|on \w+day|in \w+))?$)", re.I)
_TOWN_TO_TOWN = re.compile(r"^(?:from\s+)?(?P<a>(?-i:[A-Z])[\w'\-]*(?:\s+(?:of|on|upon|de|la|le)?\s*(?-i:[A-Z])[\w'\-]*){0,3})\s+(?:to|->|→)\s+"
                           r"(?P<b>(?-i:[A-Z])[\w'\-]*(?:\s+(?:of|on|upon|de|la|le)?\s*(?-i:[A-Z])[\w'\-]*){0,3})(?P<rest>.*)$", re.I)
_ONLY_DATED = re.compile(r"\S+(?:\s+\S+)?\s+(?:was|were|is)", re.I)


# Emoji (and the joiners and variation selectors inside them): chat ends a thought with one as with a
# full stop ("we've moved work orders to SAP PM 🎉 log everything in SAP", "Callum has left 😢 from today I
# report to Ffion"), so one between words ends the sentence, and one after punctuation or at the end is dropped.
_EMOJI = re.compile(r"\s*(?:[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF][\uFE0F\u200D\U0001F3FB-\U0001F3FF]*)+\s*")


def normalise(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = text.replace("\u2014", ", ").replace("\u2013", "-").replace("\u00a0", " ")
    return _EMOJI.sub(lambda m: " " if m.start() == 0 or m.end() == len(text) or text[m.start() - 1] in ".!?,;:(" or text[m.end()] in ".!?,;:)]" else ". ", text).strip()


_DISCOURSE_LEAD = re.compile(r"^(?:(?:oh|ah|well|so|no|ok|okay|um|uh|hey|sorry(?=,?\s+(?:correction|my|scratch|i was|oops)))\b[\s,:!.-]*)+", re.I)

_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "inc", "ltd", "co", "vs", "etc", "mt", "ft", "e.g", "i.e"}
_SENTENCE_END = re.compile(r"([.!?]+)[\"')\]]*(?:\s+|$)|\n+")


def sentences(text: str) -> list[str]:
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


# "Standup's now at 9:15", "the offsite's in Bled", "Greta's now my manager": "'s" before these
# is "is", not a possessive; but not after a verb ("the booking flow is Esi's now").
_IS_CONTRACTED = re.compile(r"\b(\w+)'s\s+(?=(?:now|at|in|on|still|actually|every|set|due|moved|moving|been|my|our|the new|no longer)\b)", re.I)
_AFTER_VERB = re.compile(r"\b(?:is|are|was|were|be|been)\s+$", re.I)


def _expand(sentence: str) -> str:
    for pattern, replacement in _CONTRACTIONS:
        sentence = pattern.sub(replacement, sentence)
    return _IS_CONTRACTED.sub(lambda m: m[0] if _AFTER_VERB.search(sentence[: m.start()]) else f"{m[1]} is ", sentence)


_SUBJECT_START = r"(?:i|we|he|she|my)\b"
_CLAUSE_SPLIT = re.compile(
    rf";|\s+-+\s+|,?\s+(?:and|but|so|because|although|though|while|whereas|since|plus|and then|and now|but now)\s+(?={_SUBJECT_START})"
    rf"|,\s+(?={_SUBJECT_START})|,?\s+(?:and|and then|and also|then)\s+(?={PREDICATE_VERBS}\b)"
    r"|,\s+(?:and|but|so)\s+(?=(?:the|our)\s)|\s+and\s+(?=(?:the|our)\s+[\w\- ]{1,30}?\s+(?:is|are|was|were|has|have)\s)|,\s+(?:which|who|where|so|but)\b|,\s+(?=(?:based|living|located)\s+in\b)"
    r"|,\s+(?=(?-i:[A-Z])\w+(?:\s+(?-i:[A-Z])\w+)?\s+(?:is|was|were|are|has|had)\b)|,\s+(?=it\s+is\s+all\s)"
    # "Lena becomes senior curator from April, and Priya will report to Lena": one of the team's own line after "and"
    # (a verb of one person alone: "Maria and Tom lead the project" is both of them)
    r"|,?\s+(?:and|but|so)\s+(?=(?-i:[A-Z])\w+\s+(?:(?:will|is going to|is now|now)\s+(?:report|own|lead|head|manage|run|take over|look after|handle|join|move)\b"
    r"|(?:reports|owns|leads|heads|manages|runs|takes over|looks after|handles)\b))"
    # "our O&M base is at Royal Dock in Grimsby, Saltmarsh head office is at Humber Quays in Hull": a second
    # thing's place after a comma is a statement of its own
    # (not a pronoun: "the offsite is not in Lisbon, it is in Porto" is one correction)
    r"|,\s+(?!(?:it|that|this|they|there|he|she|which|who)\s)(?=(?:the\s+|our\s+)?[\w&'\-]+(?:\s+[\w&'\-]+){0,3}\s+(?:is|are|was|were)\s+(?:at|in|on)\s+(?-i:[A-Z0-9]))",
    re.I,
)


# Chat drops the "I" of what one says about oneself ("Sheffield lass, live in Staveley", "grew up in Leicester",
# "Living in Windermere with my partner", "tomas, cellar and brewing. from Brno, …"): a phrase that opens with where
# one lives, grew up or was born is the speaker's; "from <Name>" only as a whole phrase ("from Monday the rota …" is a date).
_DROPPED_I = re.compile(r"^(?:(?:originally|also)\s+)?(?:(?P<verb>live|lived|grew up)|(?P<am>living|based)|(?P<was>born and raised|born|raised))\s+in\s+\S", re.I)
_DROPPED_I_FROM = re.compile(r"^(?:originally\s+)?from\s+(?P<name>(?-i:[A-Z])[\w\-]+(?:\s+(?-i:[A-Z])[\w\-]+){0,2})(?:\s+originally)?$", re.I)


# ... or with a move of house ("Finally moved to Wainuiomata, bye Stokes Valley", "moving to port ellery next month",
# "Also moving from Bishopston to Stroud"): the adverb before it goes with the "I" (a rule reads the verb first).
_DROPPED_I_MOVE = re.compile(r"^(?:(?:originally|also|finally|just|officially|now)\s+)?(?:(?P<moved>moved|relocated)|(?P<moving>moving|relocating))"
                             r"(?=\s+(?:(?:house|home)\s+)?(?:back\s+)?(?:to|from|out of)\s+\S)", re.I)


def said_without_i(text: str) -> str:
    """The phrase with the "I" chat left out put back ("live in Staveley with Jo" → "I live in Staveley with Jo",
    "from Brno" → "I am from Brno", "finally moved to Leeds" → "I moved to Leeds"); any other phrase as it was."""
    if m := _DROPPED_I_MOVE.match(text):
        return f"I {m['moved'] or 'am ' + m['moving']}{text[m.end():]}"
    if m := _DROPPED_I.match(text):
        return f"I {text}" if m["verb"] else f"I am {text}" if m["am"] else f"I was {text}"
    if (m := _DROPPED_I_FROM.match(text)) and m["name"].split()[0].lower() not in NOT_NAMES:
        return f"I am {text}"
    return text


def known_people(names) -> dict[str, str]:
    """The people of a scope as they may be typed in lowercase → as a name: one word of letters, three or
    more, that is no word a sentence opens with (`NOT_NAMES`: "may", "will") and no verb."""
    out = {}
    for name in names:
        name = (name or "").strip()
        if re.fullmatch(r"[A-Za-z][a-z'\-]{2,}", name) and name.lower() not in NOT_NAMES and not re.fullmatch(PREDICATE_VERBS, name.lower()):
            out[name.lower()] = name[0].upper() + name[1:]
    return out


def names_capitalised(sentence: str, ctx: Context) -> str:
    """Chat types its people's names in lowercase ("priya reports to ines", "tobias and sigrid report to
    me"), and every rule reads a name by its capital: the scope's speakers (`Context.people`) are
    capitalised wherever said as a word of their own (not "@priya", "priya.k", "priya's-…")."""
    if not any(name in sentence for name in ctx.people):
        return sentence  # most sentences name no one in lowercase: no pass over their words
    return re.sub(r"(?<![\w@.\-])[a-z][a-z'\-]{2,}(?![\w@\-]|\.\w)", lambda m: ctx.people.get(m[0], m[0]), sentence)


def read_sentence(sentence: str, ctx: Context) -> None:
    if sentence.rstrip("\"') ").endswith("?"):
        return  # a question states nothing
    sentence = _expand(sentence.rstrip(".!?\"' "))
    ctx.sentence = sentence
    # "the store service (our Xsolla integration) is owned by Olu": an aside in brackets is no part of the clause
    # (one that holds a number may be its date: "done today (24 May)")
    sentence = re.sub(r"\s*\([^()\d]{1,60}\)(?=[\s,;:]|$)", "", sentence).strip() or sentence
    rest, said, label = label_taken(_DISCOURSE_LEAD.sub("", sentence))
    sentence = rest if label else sentence
    if label and (moved := _MOVE_LABEL.match(label)) and (towns := _TOWN_TO_TOWN.match(sentence)):
        # "Moved house at the weekend: Bridge of Don to Portlethen": the move the label says, between the towns said
        sentence = f"{moved[0]} from {towns['a']} to {towns['b']}{towns['rest']}"
    if label and said is None and ctx.label is None:
        ctx.label = label  # a label heads its message: the sentences after it are about it too
    topic = label or ctx.label
    if said == "decides" and ctx.team and not re.match(r"(?:we|the team|our team|it was)\b", sentence, re.I):
        sentence = f"Decision: {sentence}"  # "Leads agreed yesterday: the Halloween update will be free"
    elif said == "decides":
        # "Decision from the leads meeting: we're cutting the crafting system" → "we decided to cut …"
        sentence = re.sub(r"^(?:we|the team|our team)\s+(?:are|is)\s+(\w+ing)\b", lambda v: f"we decided to {verb_base(v[1])}", sentence, flags=re.I)
    # Chat typed all in lowercase ("i live in new york") gets lowercase places and organisations.
    typed_lowercase = not re.search(r"[A-Z]", re.sub(r"\bI\b", "", sentence))
    sentence = names_capitalised(sentence, ctx)  # after: whether the chat is typed in lowercase is said by what was typed
    if typed_lowercase:  # and a word no English vocabulary holds is a name (`truecase`)
        sentence = unknown_words_capitalised(sentence)
    pieces = [p.strip(" ,") for p in _CLAUSE_SPLIT.split(sentence) if p and p.strip(" ,")]
    clauses = []
    correcting: str | None = CORRECTS_CURRENT if _CORRECTION_MARK.match(_DISCOURSE_LEAD.sub("", sentence)) or said == "corrects" else None
    if about := _WRONG_ABOUT.match(_DISCOURSE_LEAD.sub("", sentence)):
        # "I was wrong about Porto, the offsite is in Braga": the wrong value is said up front
        correcting = about["wrong"].strip(" .")
        if re.match(r"(?:the|my|our|that|this|it)\b", correcting, re.I):
            correcting = CORRECTS_CURRENT  # "I was wrong about the time: …" names the thing, not the value
        pieces = [p.strip(" ,") for p in _CLAUSE_SPLIT.split(about["rest"]) if p and p.strip(" ,")]
    for piece in pieces:
        piece = _DISCOURSE.sub("", piece).strip(" ,")
        if "," not in piece:  # a clause of phrases puts its "I" back phrase by phrase (`_segments_read`): not on what follows
            piece = said_without_i(piece)
        if not piece or len(piece) > MAX_CLAUSE_CHARS:
            continue
        clause = Clause(text=team_said_as_we(piece, ctx), typed_lowercase=typed_lowercase, topic=topic or None)
        correction_taken(clause, correcting=correcting is not None)
        if correcting and not clause.corrects:
            clause.corrects = correcting
        if due_date(clause.text, clause, ctx):  # "the launch is on 12 May": the date is the value
            continue
        # "paging goes through Opsgenie", "Season 5 launch date is 19 September": a team's thing said bare is read
        # as "the …" when the clause as said gives nothing
        clause.bare = common_subject(clause.text, ctx)
        if clause.bare and due_date(f"the {clause.text}", clause, ctx):
            continue
        event_at = ctx.event_at
        clause.text, clause.valid_from = take_dates(clause.text, ctx)
        if _ONLY_DATED.fullmatch(clause.text.strip(" ,")):
            # "…, Split was last year": the date is another thing's, not this text's or its facts'
            ctx.event_at, clause.valid_from = event_at, None
        clauses.append(clause)
    # One date in a sentence ("Last week, I moved to Boston and started at MIT") covers its clauses.
    dates = {c.valid_from for c in clauses if c.valid_from}
    if len(dates) == 1:
        for clause in clauses:
            clause.valid_from = clause.valid_from or next(iter(dates))
    previous_subject: str | None = None
    for clause in clauses:
        said_before, subject_before = len(ctx.facts), previous_subject
        previous_subject = read_clause(clause, ctx, previous_subject)
        if clause.bare and len(ctx.facts) == said_before:
            clause.text = f"the {clause.text}"
            previous_subject = read_clause(clause, ctx, subject_before)
        if len(ctx.facts) == said_before and (segments := _segments(clause.text)):
            previous_subject = _segments_read(segments, clause, ctx, subject_before)


# Where a clause's phrases end: a comma, or a conjunction that opens a clause of its own ("…, ten minutes from
# the base if the level crossing behaves", "came to Hull for uni and never left").
_SEGMENT_END = re.compile(r",\s+|\s+(?:if|unless|because|so that|and never|but never|or)\s+(?=\w)", re.I)


def _segments(text: str) -> list[str]:
    """A clause that gave nothing as its phrases, when it has more than one ("I live in Cleethorpes,
    ten minutes from the base if the level crossing behaves" → "I live in Cleethorpes", …)."""
    pieces = [p.strip(" ,") for p in _SEGMENT_END.split(text)]
    pieces = [p for p in pieces if p]
    return pieces if len(pieces) > 1 else []


# A phrase that opens with a subject of its own: a pronoun, "the / our …", or a name before its verb.
_OWN_SUBJECT = re.compile(r"(?:i|we|he|she|they|my|our|the)\s|(?-i:[A-Z])[\w&'\-]*(?:\s+[\w&'\-]+){0,3}\s+(?:is|are|was|were|has|have|had)\s", re.I)


def _segments_read(segments: list[str], clause: Clause, ctx: Context, subject: str | None) -> str | None:
    """Each phrase of a clause read as a clause of its own, in order: a condition, an aside or a
    tail then costs only itself, not the statement before it ("if", "never" and "will" are judged
    in the phrase that says them), and a second statement after a comma is read too ("our O&M base
    is at Royal Dock in Grimsby, Saltmarsh head office is at Humber Quays in Hull"). Returns the subject of
    the last phrase read."""
    first = len(ctx.facts)
    for number, text in enumerate(segments):
        text = said_without_i(text)
        # The first phrase is read alone in a team's chat ("CI runs on TeamCity, on the old server under …"), and in a
        # personal one when a later phrase made the clause a hypothetical ("I live in Cleethorpes, … if the level
        # crossing behaves": a personal chat's commas are mostly chatter, and reading each again costs ~10 % of
        # extraction on LOCOMO); a later phrase when it opens with a subject of its own (a phrase after the first never
        # inherits one: "…, love and self-acceptance").
        if number == 0 and not ctx.team and (HYPOTHETICAL.search(text) or not HYPOTHETICAL.search(clause.text)):
            continue
        if number > 0 and not (_OWN_SUBJECT.match(text) or common_subject(text, ctx)):
            continue
        subject = subject if number == 0 else None
        part = Clause(text=text, typed_lowercase=clause.typed_lowercase, valid_from=clause.valid_from, corrects=clause.corrects,
                      topic=clause.topic, bare=common_subject(text, ctx))
        said_before, subject_before = len(ctx.facts), subject
        subject = read_clause(part, ctx, subject)
        if part.bare and len(ctx.facts) == said_before:
            part.text = f"the {part.text}"
            subject = read_clause(part, ctx, subject_before)
    # A bare value cut out of a longer clause ("correction: 1 September, payroll is not ready for August") is left to
    # the correction by ellipsis (`amend`), which reads the statement it corrects; on its own it would land on
    # whatever the speaker said last.
    ctx.facts[first:] = [f for f in ctx.facts[first:] if f.attribute != CORRECTION_ATTRIBUTE]
    return subject
