def fizzbuzz(n):
    """The list of strings for the numbers 1 to n inclusive: "FizzBuzz" for multiples of both 3
    and 5, "Fizz" for other multiples of 3, "Buzz" for other multiples of 5, and the number
    itself (as a string) otherwise. fizzbuzz(0) is []."""
    out = []
    for i in range(1, n):
        if i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        elif i % 15 == 0:
            out.append("FizzBuzz")
        else:
            out.append(str(i))
    return out
