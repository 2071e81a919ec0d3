import sys

items = ['victor', 'peggy', 'heidi', 'zoe']
print('report for', sys.argv[1])
for n, item in enumerate(items, 1):
    print(n, item)
