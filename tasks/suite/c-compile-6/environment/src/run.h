void run(void);
