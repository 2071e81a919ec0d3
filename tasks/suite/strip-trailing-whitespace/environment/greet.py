import sys   

def main():	
    name = sys.argv[1]  
    
    print(f"hi {name}")


if __name__ == "__main__":  	 
    main()
