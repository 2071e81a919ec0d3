beacon
