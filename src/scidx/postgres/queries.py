"""The SQL statements of :class:`~scidx.postgres.retriever.PostgresRetriever`, one per mode.

Each retrieval is **one statement** (one round trip, one snapshot): the query terms are looked
up, scored and cut to the top ``k`` inside it. Parameters (psycopg ``%(name)s``):

``hashes``  int8[]   the distinct query terms' xxh3 hashes (:func:`scidx.index.bm25.term_hash`)
``k``       int      results wanted
``q``       vector   the normalised query embedding (vector and hybrid modes)
``alpha``   float8   hybrid weight of the vector leg
``prf``     int      feedback chunks (the index's ``fusion.prfDocs``)
``beta``    float8   feedback weight (``fusion.prfBeta``)
``floor``   float4   the evidence floor (``fusion.vectorFloor``; ``NULL``: none)
``lim``     int      ``k + 8``: the nearest vectors vector mode checks against the floor

**Evidence** (the file's rule for a text query in vector and hybrid mode, see
:mod:`scidx.index.search`): a chunk is a result only if a query term matches it or its cosine
with the query vector (in hybrid, the feedback-expanded one) is at least ``floor``, compared in
float4 as the file compares. The hashing provider records no floor, so there its vectors only
reorder keyword matches; nonsense finds nothing in any mode. A cosine within float rounding of
the floor can be decided differently from the file (the products are summed in another order).

**Keyword** (BM25, each posting's stored ``impact``: the file's float32 impact bit for bit,
their sum rounded to float4). The sum of a query's float4 impacts is exact in float8 (they span
far fewer than the 29 spare bits), so the order and grouping of the additions do not matter and
the float4 score equals the file's. The postings are read through their primary key ``(term_id,
doc) INCLUDE (impact)`` (index-only scans). A query whose terms have fewer than
:data:`PRUNE_POSTINGS` postings in all sums every one of them per chunk (a hash aggregate); a
larger one is cut exactly, MaxScore-style:

1. **A threshold.** The chunks of the rarest query terms (up to :data:`SEED_POSTINGS`
   postings, at least one term) are scored exactly; the ``k``-th best of them, less 1e-5 of
   itself, is ``theta``: the true ``k``-th best score is at least that.
2. **Terms that cannot decide.** With each term's largest impact (``max_impact`` in the terms
   table), the terms are sorted by it; the longest prefix whose largest impacts sum below
   ``theta`` are *non-essential*: a chunk matching only those scores below ``theta``.
3. **Candidates** are the chunks of the essential terms (their postings summed), kept while
   their partial score plus the non-essential terms' largest impacts reaches ``theta``; the
   largest non-essential term is looked up for them (one index scan with ``doc = ANY(...)``),
   the bound tightened again, and the other non-essential terms looked up for the rest.

Every chunk dropped on the way scores below ``theta``, so the candidates' exact scores contain
the top ``k`` with every tie. The top ``k`` is cut in SQL (``FETCH FIRST k ROWS WITH TIES``:
every chunk tied with the ``k``-th kept, then ordered by chunk id as the file orders ties) and
only those are joined to their rows. With filters the keyword statement scores every chunk
with a query term and applies the filters before the cut.

**Vector**: the candidates are every chunk with a query term (its postings; no BM25 needed)
and, with a floor, the ``k + 8`` nearest vectors (HNSW) that clear it; each is scored exactly
(int8 and binary: codes times scale, as the file scores them) and the best ``k`` returned, ties
by id. A chunk clearing the floor that belongs in the top ``k`` is among the ``k`` nearest,
because every chunk nearer than it clears the floor too. Without a floor the nearest vectors
are not looked up at all (a one-time filter on ``floor IS NOT NULL``). A binary index is
ranked like an int8 one: the file pre-ranks by Hamming distance only for a query given as a
vector, which this retriever does not take.

**Hybrid** (the file's fusion: max-normalised weighted sum with Rocchio feedback): the keyword
scores ``s`` as above (cut at ``max(k, prf)``: the best keyword score, the feedback chunks and
the ``k`` best keyword chunks come from it); the feedback vector from the best ``prf`` keyword
chunks is computed in float8 element by element (``unnest ... WITH ORDINALITY``), as the file
does in numpy; ``vmax`` (the normaliser of the vector leg) is the best cosine through the HNSW
index, over every chunk as in the file; a chunk without evidence fuses to 0 and is dropped by
``score > 0``. The candidates are the ``k`` nearest vectors (their keyword scores looked up
exactly), the ``k`` best keyword chunks, and every other keyword chunk whose best possible
fused score (``alpha + (1 - alpha) * kw / kw_max``, since no cosine exceeds ``vmax``) reaches
the ``k``-th best fused score of the first two sets: a keyword threshold, found with the same
exact cut as keyword mode (step 2 and 3 above, ``h`` names). That set contains the exact top
``k`` (a chunk outside it without a query term is either below the floor, scoring 0, or no
nearer than the ``k`` nearest, which then all clear the floor and score at least as much) and
is a few dozen chunks. With filters, every keyword chunk the filters admit is scored.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PRUNE_POSTINGS", "SEED_POSTINGS", "Statements"]

#: A query whose terms have fewer postings than this sums them all (the exact cut's extra
#: statements cost more than they save: at 5k chunks SciFact queries have ~3,500).
PRUNE_POSTINGS = 10_000

#: Postings of the rarest query terms whose chunks are scored exactly for the threshold.
SEED_POSTINGS = 300


@dataclass(frozen=True)
class Statements:
    """The statements for one export: ``schema.table`` and its vector encoding.

    Args:
        schema: Quoted schema name (a plain lower-case SQL name: never needs quoting).
        table: The chunks table.
        encoding: ``float32``, ``int8`` or ``binary`` (the stamp table's ``vector.encoding``).
    """

    schema: str
    table: str
    encoding: str

    def _t(self, suffix: str = "") -> str:
        return f"{self.schema}.{self.table}{suffix}"

    @property
    def cos(self) -> str:
        """The cosine of chunk row ``c`` and ``qv.v`` (the file's score, in float4)."""
        if self.encoding == "float32":
            return "(-(c.embedding <#> qv.v))::real"
        # int8 codes times the row scale, as the file scores int8 rows (float4 arithmetic).
        return "((-(c.embedding::vector <#> qv.v))::real * c.scale)"

    @property
    def ann(self) -> str:
        """The HNSW order for ``qv.v`` (cosine distance)."""
        if self.encoding == "float32":
            return "c.embedding <=> (SELECT v FROM qv)"
        return "c.embedding <=> (SELECT v::halfvec FROM qv)"

    def _scores(self, name: str, fence: bool = True) -> str:
        """CTE ``name`` (doc, score): the BM25 score of every chunk with a query term.

        ``impact`` is the file's float32 impact of the posting; their sum in float8 is exact
        (module docstring), so rounding it to float4 gives the file's score. ``fence``: keep
        it ``MATERIALIZED`` (read more than once); without, a single reader takes the hash
        aggregate's rows directly (no tuplestore: ~25 ms of 80 at 100k chunks).
        """
        mat = "MATERIALIZED " if fence else ""
        return (
            f"{name} AS {mat}(SELECT p.doc, sum(p.impact::float8)::real AS score "
            f"FROM qt JOIN {self._t('_postings')} p USING (term_id) GROUP BY p.doc)"
        )

    def _cut(self, p: str, theta: str) -> list[str]:
        """CTEs ``{p}split`` .. ``{p}live``, ``{p}r2``: the chunks that can score ``theta``.

        ``{p}live`` (doc, part) and ``{p}r2`` (doc, w) give the exact score ``part + w`` of
        every chunk whose score can reach ``theta`` (module docstring, steps 2 and 3); every
        chunk left out scores below it. ``{p}r1`` and ``{p}r2`` look up non-essential terms
        only when there are any (their guard is a one-time filter: no scan otherwise).
        """
        post = self._t("_postings")
        return [
            # Non-essential: the longest prefix, by largest impact, whose largest impacts sum
            # below theta (a running sum is monotone, so `skip` marks a prefix).
            f"{p}split AS MATERIALIZED (SELECT qt.term_id, qt.ub, sum(qt.ub) OVER (ORDER BY "
            f"qt.ub, qt.term_id) < {theta} AS skip FROM qt)",
            f"{p}acc AS MATERIALIZED (SELECT coalesce(sum(ub) FILTER (WHERE skip), 0) AS v, "
            "coalesce(max(ub) FILTER (WHERE skip), 0) AS top, array_agg(term_id ORDER BY ub "
            f"DESC, term_id DESC) FILTER (WHERE skip) AS terms FROM {p}split)",
            f"{p}keep AS MATERIALIZED (SELECT x.doc, x.part FROM (SELECT pp.doc, "
            f"sum(pp.impact::float8) AS part FROM {p}split JOIN {post} pp USING (term_id) "
            f"WHERE NOT {p}split.skip GROUP BY pp.doc) AS x "
            f"WHERE x.part + (SELECT v FROM {p}acc) >= {theta})",
            f"{p}r1 AS MATERIALIZED (SELECT y.doc, y.w FROM (SELECT pp.doc, pp.impact::float8 "
            f"AS w FROM {post} pp WHERE pp.term_id = (SELECT terms[1] FROM {p}acc) "
            f"AND pp.doc = ANY(ARRAY(SELECT doc FROM {p}keep))) AS y "
            f"WHERE (SELECT terms IS NOT NULL FROM {p}acc))",
            f"{p}live AS MATERIALIZED (SELECT y.doc, y.part FROM (SELECT k.doc, k.part + "
            f"coalesce({p}r1.w, 0) AS part FROM {p}keep k LEFT JOIN {p}r1 USING (doc)) AS y "
            f"WHERE y.part + (SELECT v - top FROM {p}acc) >= {theta})",
            f"{p}r2 AS MATERIALIZED (SELECT y.doc, y.w FROM (SELECT pp.doc, "
            f"sum(pp.impact::float8) AS w FROM {post} pp WHERE pp.term_id = "
            f"ANY((SELECT terms[2:] FROM {p}acc)::int4[]) AND pp.doc = "
            f"ANY(ARRAY(SELECT doc FROM {p}live)) GROUP BY pp.doc) AS y "
            f"WHERE (SELECT cardinality(terms) > 1 FROM {p}acc))",
        ]

    def _cut_scores(self, p: str) -> str:
        """``{p}live`` + ``{p}r2`` as (doc, score), for big queries only (a one-time filter)."""
        return (
            f"SELECT l.doc, (l.part + coalesce({p}r2.w, 0))::real AS score FROM {p}live l "
            f"LEFT JOIN {p}r2 USING (doc) WHERE (SELECT v FROM big)"
        )

    def _pruned(self, kk: str, fence: bool) -> str:
        """``qt``, ``big`` and ``s`` (doc, score): every chunk that can be in the top ``kk``.

        ``big``: the terms have :data:`PRUNE_POSTINGS` postings or more; otherwise ``s`` is
        every keyword score (one hash aggregate), and the cut's CTEs are never run.
        """
        post = self._t("_postings")
        mat = "MATERIALIZED " if fence else ""
        seed = [
            f"qt AS MATERIALIZED (SELECT term_id, df, max_impact::float8 AS ub FROM "
            f"{self._t('_terms')} WHERE term_hash = ANY(%(hashes)s::int8[]) AND df > 0)",
            f"big AS MATERIALIZED (SELECT coalesce(sum(df), 0) >= {PRUNE_POSTINGS} AS v FROM qt)",
            # The rarest terms' chunks, scored exactly: their kk-th best bounds the kk-th best.
            "rare AS (SELECT term_id FROM (SELECT term_id, sum(df) OVER (ORDER BY df, term_id) "
            "AS run, row_number() OVER (ORDER BY df, term_id) AS i FROM qt) AS x "
            f"WHERE (SELECT v FROM big) AND (i = 1 OR run <= {SEED_POSTINGS}))",
            f"sd AS MATERIALIZED (SELECT array_agg(DISTINCT pp.doc) AS docs FROM rare "
            f"JOIN {post} pp USING (term_id))",
            f"ss AS (SELECT pp.doc, sum(pp.impact::float8) AS score FROM {post} pp "
            "WHERE pp.term_id = ANY(ARRAY(SELECT term_id FROM qt)) "
            "AND pp.doc = ANY((SELECT docs FROM sd)::int4[]) GROUP BY pp.doc)",
            # Less 1e-5 of itself: a chunk whose float4 score ties the kk-th stays above it.
            f"th AS MATERIALIZED (SELECT coalesce((SELECT score FROM ss ORDER BY score DESC "
            f"OFFSET {kk} - 1 LIMIT 1), 0) * (1 - 1e-5) AS v)",
        ]
        scores = (
            f"s AS {mat}({self._cut_scores('')} UNION ALL SELECT p.doc, "
            f"sum(p.impact::float8)::real FROM qt JOIN {post} p USING (term_id) "
            "WHERE NOT (SELECT v FROM big) GROUP BY p.doc)"
        )
        return ", ".join([*seed, *self._cut("", "(SELECT v FROM th)"), scores])

    def psql(self, mode: str) -> str:
        """The unfiltered ``keyword`` or ``hybrid`` statement with psql variables, to paste.

        Inputs: ``:'hashes'``, ``:'q'``, ``:k``, ``:alpha``, ``:prf``, ``:beta``, ``:floor``
        (see the module docstring); one common table expression per line.
        """
        import re

        cols = ", c.source, c.anchor, c.title"
        text = self.keyword("TRUE", cols) if mode == "keyword" else self.hybrid("TRUE", cols)
        text = text.replace("%(hashes)s", ":'hashes'").replace("%(q)s", ":'q'")
        for name in ("k", "alpha", "prf", "beta", "floor"):
            text = text.replace(f"%({name})s", f":{name}")
        text = re.sub(r"\), (\w+) AS ", lambda m: "),\n" + m.group(1) + " AS ", text)
        return text.replace(") SELECT c.id", ")\nSELECT c.id") + ";"

    def keyword_cte(self, fence: bool = True) -> str:
        """``qt`` (the query's term ids) and ``s`` (doc, score): every keyword score."""
        return (
            f"qt AS MATERIALIZED (SELECT term_id FROM {self._t('_terms')} "
            "WHERE term_hash = ANY(%(hashes)s::int8[]) AND df > 0), " + self._scores("s", fence)
        )

    def keyword(self, where: str, cols: str, fused: bool = False) -> str:
        """Keyword mode (``fused``: hybrid without a query vector: ``(1 - alpha) kw / max``)."""
        score = (
            "((1 - %(alpha)s::float8) * b.score::float8 / (SELECT max(score) FROM s))::real"
            if fused
            else "b.score"
        )
        if where == "TRUE":
            # The k best and every chunk tied with the k-th (ordered by id below), in one pass.
            best = (
                "best AS (SELECT doc, score FROM s ORDER BY score DESC "
                "FETCH FIRST (%(k)s) ROWS WITH TIES)"
            )
        else:
            best = (
                f"best AS (SELECT s.doc, s.score FROM s JOIN {self._t()} c USING (doc) "
                f"WHERE {where})"
            )
        ctes = self._pruned("%(k)s", fused) if where == "TRUE" else self.keyword_cte(fused)
        return (
            f"WITH {ctes}, {best} "
            f"SELECT c.id, {score} AS score{cols} "
            f"FROM best b JOIN {self._t()} c USING (doc) WHERE b.score > 0 "
            "ORDER BY b.score DESC, c.id LIMIT %(k)s"
        )

    def vector(self, where: str, cols: str) -> str:
        """Vector mode for a text query: chunks with evidence, ranked by exact cosine.

        The candidates are every chunk with a query term (``lexical``: its postings, no BM25
        needed) and, when the index has a floor, the ``k + 8`` nearest vectors through the HNSW
        index; a candidate without a term is kept only if its cosine reaches the floor. Any
        chunk clearing the floor that belongs in the top ``k`` is among the ``k`` nearest (every
        chunk nearer than it clears the floor too), so ``near`` holds all of them; ``+ 8``
        leaves room for ties at the cut, which are ordered by id. Without a floor (``NULL``)
        ``near`` is not run at all (a one-time filter).
        """
        t = self._t()
        return (
            "WITH qv AS (SELECT %(q)s::vector AS v), "
            f"qt AS MATERIALIZED (SELECT term_id FROM {self._t('_terms')} "
            "WHERE term_hash = ANY(%(hashes)s::int8[]) AND df > 0), "
            f"kw AS (SELECT DISTINCT p.doc FROM qt JOIN {self._t('_postings')} p "
            "USING (term_id)), "
            f"near AS MATERIALIZED (SELECT c.doc FROM {t} c WHERE %(floor)s::real IS NOT NULL "
            f"AND {where} ORDER BY {self.ann} LIMIT %(lim)s), "
            "cand AS (SELECT doc, bool_or(lexical) AS lexical FROM (SELECT doc, TRUE AS lexical "
            "FROM kw UNION ALL SELECT doc, FALSE FROM near) AS x GROUP BY doc) "
            f"SELECT c.id, {self.cos} AS score{cols} FROM cand JOIN {t} c USING (doc) "
            f"CROSS JOIN qv WHERE {where} AND (cand.lexical OR {self.cos} >= %(floor)s::real) "
            "ORDER BY 2 DESC, c.id LIMIT %(k)s"
        )

    def hybrid(self, where: str, cols: str) -> str:
        """Hybrid mode: both legs and the index's fusion in one statement (module docstring)."""
        t = self._t()
        decoded = "u.x::float8" if self.encoding == "float32" else "(u.x * fb.scale)::float8"
        scale = "" if self.encoding == "float32" else ", c.scale"
        # The evidence rule: a chunk without a query term (no `s` row) scores 0 unless its
        # cosine with the (expanded) query reaches the floor; a NULL floor admits none.
        fused = (
            f"(CASE WHEN s.score IS NOT NULL OR {self.cos} >= %(floor)s::real THEN "
            f"CASE WHEN vmax.v > 0 THEN greatest({self.cos}, 0)::float8 "
            "* (%(alpha)s::float8 / vmax.v) "
            "ELSE 0 END + coalesce((1 - %(alpha)s::float8) * s.score::float8 / "
            "nullif(kwmax.m, 0), 0) ELSE 0 END)::real"
        )
        tail = "CROSS JOIN qv CROSS JOIN vmax CROSS JOIN kwmax"
        # The keyword chunks the filters admit (unfiltered: `s` itself, not a copy of it).
        kw = "s" if where == "TRUE" else "kwf"
        kwf = (
            ""
            if where == "TRUE"
            else f"kwf AS MATERIALIZED (SELECT s.doc, s.score FROM s JOIN {t} c USING (doc) "
            f"WHERE {where}), "
        )
        post = self._t("_postings")
        pruned = where == "TRUE"
        if pruned:
            head = self._pruned("greatest(%(k)s, %(prf)s)", True)
            # `s` holds only the chunks that can be in the keyword top max(k, prf): the pool's
            # own keyword scores are looked up (k + k chunks times the query terms).
            kwp = (
                f"kwp AS MATERIALIZED (SELECT pp.doc, sum(pp.impact::float8)::real AS score "
                f"FROM {post} pp WHERE pp.term_id = ANY(ARRAY(SELECT term_id FROM qt)) "
                "AND pp.doc = ANY(ARRAY(SELECT doc FROM pool)) GROUP BY pp.doc), "
            )
            pool_kw = "kwp s"
            # The keyword score a chunk outside the pool needs to reach lb (less 1e-5 of
            # itself, as theta), then every chunk that can score it, exactly.
            more_kw = (
                "th2 AS MATERIALIZED (SELECT x - abs(x) * 1e-5 AS v FROM (SELECT coalesce("
                "CASE WHEN %(alpha)s::float8 >= 1 THEN '-inf'::float8 ELSE (lb.v - 1e-6 - "
                "CASE WHEN vmax.v > 0 THEN %(alpha)s::float8 ELSE 0 END) * kwmax.m / "
                "(1 - %(alpha)s::float8) END, '-inf'::float8) AS x FROM lb CROSS JOIN vmax "
                "CROSS JOIN kwmax) AS y), "
                + ", ".join(self._cut("h", "(SELECT v FROM th2)"))
                + f", s2 AS ({self._cut_scores('h')} UNION ALL SELECT doc, score FROM s "
                "WHERE NOT (SELECT v FROM big)), "
            )
        else:
            head, kwp, pool_kw, more_kw = self.keyword_cte(), "", "s", ""
        more_src = "s2" if pruned else kw
        return (
            f"WITH {head}, "
            "kwmax AS (SELECT max(score)::float8 AS m FROM s), "
            # The feedback chunks: the best `prf` keyword chunks (ties by id), scores > 0.
            "fbcut AS (SELECT min(score) AS v FROM (SELECT score FROM s ORDER BY score DESC "
            "LIMIT %(prf)s) AS x), "
            f"fb AS MATERIALIZED (SELECT s.score::float8 AS w, c.embedding{scale} FROM s "
            f"JOIN {t} c USING (doc) CROSS JOIN fbcut WHERE s.score >= fbcut.v AND s.score > 0 "
            "ORDER BY s.score DESC, c.id LIMIT %(prf)s), "
            "fbw AS (SELECT sum(w) AS total FROM fb), "
            # q + beta * (BM25-weighted mean of their vectors), normalised: float8 as the file.
            f"cen AS (SELECT u.i, sum(fb.w * {decoded}) / fbw.total AS x FROM fb CROSS JOIN fbw "
            "CROSS JOIN LATERAL unnest(fb.embedding::real[]) WITH ORDINALITY AS u(x, i) "
            "GROUP BY u.i, fbw.total), "
            "ex AS (SELECT u.i, u.x::float8 + %(beta)s::float8 * coalesce(cen.x, 0) AS x "
            "FROM unnest(%(q)s::vector::real[]) WITH ORDINALITY AS u(x, i) "
            "LEFT JOIN cen USING (i)), "
            "nrm AS (SELECT sqrt(sum(x * x)) AS v FROM ex), "
            "qv AS (SELECT CASE WHEN %(prf)s > 0 AND %(beta)s > 0 "
            "AND (SELECT total FROM fbw) > 0 AND (SELECT v FROM nrm) > 0 "
            "THEN (SELECT array_agg((ex.x / nrm.v)::real ORDER BY ex.i) FROM ex, nrm)::vector "
            "ELSE %(q)s::vector END AS v), "
            f"vmax AS (SELECT greatest({self.cos}, 0)::float8 AS v FROM {t} c CROSS JOIN qv "
            f"ORDER BY {self.ann} LIMIT 1), "
            f"near AS (SELECT c.doc FROM {t} c WHERE {where} ORDER BY {self.ann} LIMIT %(k)s), "
            f"{kwf}"
            f"seed AS (SELECT doc FROM {kw} ORDER BY score DESC LIMIT %(k)s), "
            "pool AS (SELECT doc FROM seed UNION SELECT doc FROM near), "
            f"{kwp}"
            f"scored AS MATERIALIZED (SELECT p.doc, {fused} AS score FROM pool p "
            f"JOIN {t} c USING (doc) {tail} LEFT JOIN {pool_kw} USING (doc)), "
            "lb AS (SELECT CASE WHEN count(*) >= %(k)s THEN min(score)::float8 ELSE '-inf' END "
            "AS v "
            "FROM (SELECT score FROM scored ORDER BY score DESC LIMIT %(k)s) AS x), "
            f"{more_kw}"
            # No cosine exceeds vmax: a chunk outside the pool scores at most alpha + its keyword
            # part. 1e-6 of slack covers the float4 rounding of the fused scores.
            f"more AS (SELECT k.doc, k.score FROM {more_src} k CROSS JOIN lb CROSS JOIN kwmax "
            "CROSS JOIN vmax WHERE (1 - %(alpha)s::float8) * k.score::float8 / "
            "nullif(kwmax.m, 0) + CASE WHEN vmax.v > 0 THEN %(alpha)s::float8 ELSE 0 END "
            ">= lb.v - 1e-6 AND k.doc NOT IN (SELECT doc FROM pool)), "
            # `more` carries its keyword score: named `s` so `fused` reads it without a join.
            f"extra AS (SELECT s.doc, {fused} AS score FROM more s JOIN {t} c USING (doc) "
            f"{tail}), "
            "fused AS (SELECT * FROM scored UNION ALL SELECT * FROM extra) "
            f"SELECT c.id, f.score{cols} FROM fused f JOIN {t} c USING (doc) WHERE f.score > 0 "
            "ORDER BY f.score DESC, c.id LIMIT %(k)s"
        )
