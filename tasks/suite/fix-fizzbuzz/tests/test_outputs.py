from judge import agent_calls


def expected(n):
    return ["FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else str(i)
            for i in range(1, n + 1)]


def test_fizzbuzz():
    ns = [0, 1, 3, 5, 15, 31]
    results = agent_calls("/app/fizzbuzz.py", [("fizzbuzz", (n,)) for n in ns])
    for n, got in zip(ns, results):
        assert got.get("value") == expected(n), f"fizzbuzz({n}) returned {got}, expected {expected(n)}"
