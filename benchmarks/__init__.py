"""recall's benchmarks: each module answers one question, next to a baseline measured in the same run.

Figures live in ``docs/benchmarks.md``, written only by ``python -m benchmarks.report`` from the
results JSON committed here and the prose in ``benchmarks/prose/*.md``
(``tests/benchmarks/test_benchmark_docs.py`` pins that the page is that rendering). Dev data is read from
``shared/data`` beside the checkout (or ``$RECALL_BENCH_DATA``), never copied in.

Which module answers which question:

| question | module | baseline in the same run |
| --- | --- | --- |
| everything at once: throughput, latency, RSS, freshness, first minutes, retrieval | ``run`` | SQLite FTS5 (``fts5``), the floor (``floor``) |
| how fast a large history is indexed, and its peak RSS | ``backfill`` (via ``run``) | FTS5 fed the same messages |
| what Tantivy itself costs under recall's steps | ``floor`` | Tantivy alone |
| how long a search takes | ``query_latency`` | FTS5 on the same corpus |
| what each part of the search costs | ``search_ab`` | the search without that part |
| how long a written line takes to be searchable | ``freshness`` | — (a target: 1 s p95) |
| what a user feels in the first minutes with a long history | ``catchup`` | the same history indexed offline |
| how long the prompt hook takes, with and without the service | ``hook_latency`` | ``python -c pass`` |
| what the model backends add to the hook and to start-up | ``backends`` | no backend |
| what the plugin's launcher adds to every hook | ``plugin_launcher`` | the hook without it |
| how fast the everyday commands start | ``startup`` | ``python -c pass`` |
| a shell search next to an FTS5 search process, the everyday commands' CPU at 200K (issue 48) | ``light`` (+ ``fts5_search``, the FTS5 process) | FTS5, ``python -c pass``, today's main |
| how long matching triggered rules takes per prompt | ``rules`` | a prompt without rules |
| does the right past session rank first (LoCoMo, LongMemEval-S) | ``retrieval`` | BM25 (rank_bm25) |
| does the hook inject when it helps and stay silent when not (issue 25) | ``injection`` (+ ``injection_figures``, ``new_task_prompts``) | today's main, BM25 |
| the same at every history size, on coding histories (issue 34) | ``injection_sizes`` (+ ``coding_history``, ``injection_driver``) | today's main, BM25 |
| how long the prompt hook holds the prompt when the model takes 2 s (issue 47) | ``hold`` | the raw path, today's main, ``python -c pass`` |
| when to ask the model at all: new tasks asked against the answer in the request (issue 47) | ``call_gate`` | asking about every prompt with a candidate |
| the model path's own figures, from replies a reader wrote seeing only the requests (issue 47) | ``model_path`` (+ ``model_replies.json``) | today's main's requests, read the same way |
| what any decision made of the raw path's signals can reach, the model path's semantic floor, companion sessions (issue 34) | ``decision_bound`` (on ``injection_sizes``' records: no hook runs) | the shipped raw decision (``hook.min_confidence``) on the same records |
| the semantic stage as a candidate source and a feature (issue 25, not shipped then) | ``semantic_study`` | the lexical gate |
| the shipped semantic channel's ranking on the coding history (issue 34) | ``coding_semantic`` | ``recall --raw``'s ranking (``injection_sizes``) |
| what the semantic channel costs: load, memory, embedding rate, latency per prompt | ``semantic_cost`` | — (the hook's own p50 is in ``injection_sizes``) |
| ranking ideas measured and not shipped (issue 18) | ``ranking_ideas`` (+ ``minilm_numpy``) | the shipped ranking |
| Chinese and Japanese matching | ``cjk_probe`` | per-character terms |
| does a word finding its family (decide -> decision) help or hurt ranking (issue 44) | ``word_families`` | the same search without families |
| what redaction leaks and what it changes | ``redaction`` (+ ``redaction_heldout``, ``redaction_heldout46``: held-out sets run once) | the previous rules version |
| what re-redacting a stored history costs | ``reredact`` | indexing it |
| what making forgotten bytes leave the disk costs | ``forget`` | the index without the forget |
| whether stale marks are right and what they cost | ``stale`` | no marks |
| team memory at scale on PostgreSQL | ``team`` | a local search |
| how fast Codex CLI and Gemini CLI sessions are indexed | ``agents`` | Claude Code's transcripts |
| how fast ``recall ui`` paints and searches | ``ui`` | the same HTML as static files; the socket search op |

Shared pieces: ``harness`` (one percentile, one timed process, one service start and stop),
``generate`` (deterministic Claude Code transcripts), ``page`` and ``report`` (the page).
Not a benchmark: ``common_words`` writes ``recall/search/common_words.py`` from wordfreq's list.
"""
