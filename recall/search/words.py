"""Word lists that say what a prompt is *not* about. Stdlib only: the prompt hook imports it
before anything heavy.

``PROMPT_STOPWORDS``: words that say nothing about what a prompt is about (compared before
and after stemming). ``FRAMING``: the words a question about the past is framed with ("what
did we decide last time", "remind me what you said", "in our previous chat"): they point at
the history, not at a subject in it, so a hit is never judged by whether it holds them
(``recall.search.confidence``). ``CODING_FRAMING``: the same for where the work happens
("this repo", "the codebase") and how it is asked ("please", "again").
"""

PROMPT_STOPWORDS = """a about above after again all also am an and any are as at be because been before being
below between both but by can could did do does doing done down during each few for from further
had has have having he her here hers him his how i if in into is it its itself just let like me
more most my no nor not now of off on once only or other our ours out over own please same she
should so some such than that the their them then there these they this those through to too
under until up us very was we were what when where which while who whom why will with would you
your yours yes ok okay thanks thank hi hello hey tell know think want need make get got go use
used using one two way thing things something anything lot really sure right still even well
much many may might must shall yeah yep else otherwise whether either neither instead""".split()

FRAMING = """last time times previous previously earlier before ago past recent recently remind reminder
recall remember remembered forgot forget mention mentioned said say says told tell talk talked talking
discuss discussed discussion decide decided decision chat chats conversation conversations session
sessions again back""".split()

# The words a coding prompt is framed with: where the work is ("in this repo", "the codebase"),
# politeness and repetition ("please", "again", "as usual"). Like ``FRAMING``, never a subject:
# no history need hold them (a new user's history holds none of them).
CODING_FRAMING = """repo repos repository repositories codebase codebases please pls plz again anymore
currently usual usually quick quickly""".split()
