maple
