import sys

items = ['yara', 'dave', 'trent', 'ursula']
print('report for', sys.argv[1])
for n, item in enumerate(items, 1):
    print(n, item)
