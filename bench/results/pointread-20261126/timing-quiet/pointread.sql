\set id random(1, :rows)
SELECT v, pad FROM pr WHERE id = :id;
