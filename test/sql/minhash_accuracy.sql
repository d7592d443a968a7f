-- The estimator against exact Jaccard: 300 document pairs spread over
-- Jaccard 0..1.  similarity() must follow the binomial law of K = 128
-- positions: error sd sqrt(J(1-J)/K), no bias.
SET extra_float_digits = 0;
SELECT setseed(0.42);

-- 240 pairs of 300-word documents, and 60 pairs of 40-word documents
-- (fewer shingles than positions, so densification is exercised).  A copy
-- replaces each word with probability r; r is chosen so that the share of
-- intact 5-shingles, q = (1-r)^5, is spread evenly over 0..1.
CREATE TABLE acc_pairs AS
SELECT pair, len, (1 - power(q, 0.2)) AS edit_rate, words
FROM (SELECT g AS pair, CASE WHEN g <= 240 THEN 300 ELSE 40 END AS len,
             CASE WHEN g <= 240 THEN (g - 1) / 239.0 ELSE (g - 241) / 59.0 END AS q
      FROM generate_series(1, 300) g) p,
     LATERAL (SELECT array_agg('w' || floor(random() * 20000)::int) AS words
              FROM generate_series(1, len + 0 * pair)) w;

CREATE TABLE acc_docs AS
SELECT pair, len,
       array_to_string(words, ' ') AS a,
       (SELECT string_agg(CASE WHEN random() < edit_rate
                               THEN 'x' || floor(random() * 20000)::int ELSE w END, ' ')
        FROM unnest(words) w) AS b
FROM acc_pairs;

CREATE TABLE acc AS
SELECT pair, len, jaccard(a, b) AS j,
       similarity(minhash_sketch(a), minhash_sketch(b)) AS est
FROM acc_docs;

-- the pairs cover 0..1
SELECT width_bucket(j, 0, 1.000001, 5) AS jaccard_fifth, count(*) >= 20 AS enough_pairs
FROM acc GROUP BY 1 ORDER BY 1;

-- long documents: mean absolute error within the binomial law's
-- (about 0.035 at K = 128 in the worst case, J = 0.5), mean signed error
-- near 0, observed error within 25% of the error the law predicts for
-- these very pairs, and few estimates beyond 3 standard deviations
SELECT count(*) AS pairs,
       avg(abs(est - j)) < 0.035 AS mae_ok,
       abs(avg(est - j)) < 0.01 AS unbiased,
       avg(abs(est - j)) / avg(sqrt(2 / pi()) * sqrt(j * (1 - j) / 128))
           BETWEEN 0.75 AND 1.25 AS follows_binomial,
       count(*) FILTER (WHERE abs(est - j) > 3 * sqrt(j * (1 - j) / 128) + 1.0 / 128) <= 3 AS tails_ok
FROM acc WHERE len = 300;

-- short documents: densified sketches stay unbiased, error near the law
SELECT count(*) AS pairs,
       abs(avg(est - j)) < 0.02 AS unbiased,
       avg(abs(est - j)) / avg(sqrt(2 / pi()) * sqrt(j * (1 - j) / 128))
           BETWEEN 0.6 AND 1.5 AS follows_binomial
FROM acc WHERE len = 40;

-- identical documents give exactly 1; unrelated ones near 0
SELECT bool_and(est = 1) AS identical_is_one FROM acc WHERE j = 1;
SELECT max(similarity(minhash_sketch(x.a), minhash_sketch(y.a))) < 0.05 AS unrelated_near_zero
FROM acc_docs x JOIN acc_docs y ON y.pair = x.pair + 1 WHERE x.len = 300 AND y.len = 300;

-- the estimate does not depend on the seed: over 200 seeds, the mean
-- estimate of one pair is within 3 standard errors of its Jaccard
SELECT abs(avg(similarity(minhash_sketch(a, seed => s), minhash_sketch(b, seed => s))) - min(j))
         < 3 * sqrt(min(j) * (1 - min(j)) / 128 / 200) AS seed_mean_ok
FROM (SELECT d.a, d.b, acc.j FROM acc_docs d JOIN acc USING (pair) WHERE pair = 120) p,
     generate_series(1, 200) s;
