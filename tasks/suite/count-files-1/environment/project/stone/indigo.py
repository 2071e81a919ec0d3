indigo
