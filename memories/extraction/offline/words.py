"""The English words the offline rules read: what is not a name, relations, pets, job titles."""

import re

from memories.extraction.lexicon import FIRST_PERSON

NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "couple of": 2,
}  # fmt: skip

# Words that open a sentence but are not names (the first-person words among them).
NOT_NAMES = FIRST_PERSON | set(
    """
    im we you he she it they this that these those there here what when where why how who which whose
    your our their his her its the a an and but or so if then also just well oh ah yes yeah yep no not nope
    hey hi hello thanks thank good great nice cool awesome sounds sure ok okay lol haha wow maybe please today
    yesterday tomorrow tonight last next every some any all both each one let lets let's do did does have has had
    is are was were can could would should will might must since after before while because although though
    anyway anyways actually honestly definitely really totally life being having getting going guess
    congrats congratulations sorry omg btw hope love like happy glad sad excited wish speaking talking also
    most many much more less few lots lot everyone everybody someone somebody nobody nothing something anything
    everything monday tuesday wednesday thursday friday saturday sunday january february march april may june
    july august september october november december spring summer fall autumn winter christmas easter new old
    dear absolutely exactly right true yay aww hmm hm um uh wait look see listen bye goodbye welcome
    """.split()
)
# Weekday and month names in full, lowercase.
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
# Words too small to be a value or to tell two messages apart, for the readers of corrections (amend, contrast).
SMALL_WORDS = frozenset("a an the of in on at to for and or but is are was were be it its it's we our i my me you your "
                        "this that with from by as not no so just now then above here there".split())
# Words that make a phrase a clause of its own ("the fridge is not working"), not a value.
CLAUSE_WORDS = tuple("is are was were be been do does did has have had will would can could should i we you they he "
                     "she it there this that".split())
# Starts of a value that make it a description, not a name ("a startup", "my place").
DETERMINERS = set(
    "a an my your his her our their its this that these those some any every each no another other such "
    "it them him me you us there here what which who whom how when where why".split()
)
# Lowercase words that are not places or organisations even in all-lowercase chat.
NOT_PROPER = set(
    "home work school college university office town city the moment night bed church weekends lunch dinner "
    "breakfast gym store shop park beach party place house apartment flat company startup job it all first "
    "least most length times time to from in at on for with as of by and or but so then here there".split()
)
RELATIONS = {
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
RELATION_RE = "|".join(sorted((re.escape(r) for r in RELATIONS), key=len, reverse=True))
PETS = {
    "dog": "dog", "puppy": "dog", "pup": "dog", "cat": "cat", "kitten": "cat", "kitty": "cat", "parrot": "parrot",
    "bird": "bird", "budgie": "bird", "hamster": "hamster", "rabbit": "rabbit", "bunny": "rabbit", "fish": "fish",
    "goldfish": "fish", "turtle": "turtle", "tortoise": "tortoise", "horse": "horse", "pony": "pony",
    "snake": "snake", "lizard": "lizard", "gecko": "gecko", "guinea pig": "guinea pig", "ferret": "ferret",
    "retriever": "dog", "labrador": "dog", "lab": "dog", "poodle": "dog", "beagle": "dog", "husky": "dog",
    "terrier": "dog", "bulldog": "dog", "corgi": "dog", "pug": "dog", "shepherd": "dog", "dachshund": "dog",
    "chihuahua": "dog",
}  # fmt: skip
PET_RE = "|".join(sorted((re.escape(p) for p in PETS), key=len, reverse=True))
# Heads of job titles, for the weak cues ("I'm a nurse", "she is a teacher at …"); strong cues
# ("as a …", "promoted to …") accept any short noun phrase.
JOBS = set(
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
    sre devops qa pm em swe captain
    dj podcaster youtuber streamer influencer blogger model stylist hairdresser barber tailor jeweler jeweller
    """.split()
)

# Case-sensitive even inside re.I patterns: a name is capitalised ("my sister Anna lives …").
NAME = r"(?-i:[A-Z][a-zA-Z'\-]*[a-z][a-zA-Z'\-]*)"

# Verbs that open a predicate: a clause starting with one carries the previous clause's subject.
PREDICATE_VERBS = (
    r"(?:moved|relocated|started|joined|got|work|works|worked|live|lives|lived|love|loves|like|likes|"
    r"enjoy|enjoys|hate|hates|adopted|have|has|left|quit|became|play|plays|speak|speaks|went|visited|"
    r"bought|married|am|is|was|graduated|study|studies|grew|do|does|did|use|uses|run|runs|own|owns|report|reports)"
)
