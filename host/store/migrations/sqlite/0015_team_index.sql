-- The team's index log (`team_index`) lives on a team database only: a data folder's index is
-- its own. This version keeps the two dialects' migrations numbered alike.
SELECT 1;
